package tailproof

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKeySetAgreesWithAMap drives keySet and a map with the same random
// adds and lookups — keys of every length, the empty one and
// near-duplicates included, across many growths — and checks that they
// agree on every membership, flag and stored key.
func TestKeySetAgreesWithAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s, model := newKeySet(), map[string]uint8{}
	offs := map[string]uint32{}
	key := func() string {
		switch r.IntN(4) {
		case 0:
			return ""
		case 1:
			return fmt.Sprintf("t%d", r.IntN(5000))
		case 2:
			return fmt.Sprintf("0199c0de-0000-7000-8000-%012d", r.IntN(5000))
		}
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	for range 40000 {
		k := key()
		if r.IntN(2) == 0 {
			f := uint8(1) << r.IntN(2)
			off, err := s.add(k, f)
			if err != nil {
				t.Fatal(err)
			}
			if prev, ok := offs[k]; ok && prev != off {
				t.Fatalf("%q moved from %d to %d", k, prev, off)
			}
			offs[k] = off
			model[k] |= f
		}
		f, off, ok := s.get(k)
		mf, mok := model[k]
		if ok != mok || f != mf || ok && (off != offs[k] || string(s.keyBytes(off)) != k) {
			t.Fatalf("%q: set says %v %b at %d, map %v %b", k, ok, f, off, mok, mf)
		}
	}
	if s.n != len(model) || s.n*2 > len(s.slots) {
		t.Fatalf("%d keys in %d slots, map has %d", s.n, len(s.slots), len(model))
	}
}
