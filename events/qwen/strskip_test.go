package qwen

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// seqEscaped is escapedBits one byte at a time.
func seqEscaped(bs, carry uint64) (escaped, next uint64) {
	esc := carry == 1
	for i := range 64 {
		if esc {
			escaped |= 1 << i
			esc = false
			continue
		}
		if bs>>i&1 == 1 {
			esc = true
		}
	}
	if esc {
		next = 1
	}
	return escaped, next
}

// escapedBits against the sequential rule: every pattern of the low 16
// bits and of the 16 bits around the block's end, with both carries, and
// random blocks of every density.
func TestEscapedBits(t *testing.T) {
	check := func(bs, carry uint64) {
		e, n := escapedBits(bs, carry)
		we, wn := seqEscaped(bs, carry)
		if e != we || n != wn {
			t.Fatalf("escapedBits(%064b, %d) = %064b, %d; want %064b, %d", bs, carry, e, n, we, wn)
		}
	}
	for p := range uint64(1 << 16) {
		for carry := range uint64(2) {
			check(p, carry)
			check(p<<48, carry)
			check(p<<24|0xf, carry)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 18 {
		bs := r.Uint64()
		for range r.IntN(4) {
			bs &= r.Uint64() // sparser
		}
		for range r.IntN(3) {
			bs |= r.Uint64() // denser: long runs
		}
		check(bs, uint64(r.IntN(2)))
	}
}

// checkSkip: the block scanner (where built) and skipString agree with the
// scalar stringEnd on the string starting at data[0] (a quote).
func checkSkip(t *testing.T, data []byte) {
	t.Helper()
	var ref, got scanner
	ref.reset(data)
	_, _, wantOK := ref.stringEnd()
	got.reset(data)
	gotOK := got.skipString()
	if gotOK != wantOK || gotOK && got.i != ref.i || !gotOK && (got.err == nil || got.err.off != ref.err.off) {
		t.Fatalf("skipString = %v at %d (%v), stringEnd = %v at %d (%v)\n%q", gotOK, got.i, got.err, wantOK, ref.i, ref.err, data)
	}
	if haveBlockScan && len(data) > 0 {
		end, ok := skipStringBlocks(data, 1)
		if ok && (!wantOK || end != ref.i) {
			t.Fatalf("skipStringBlocks = %d, %v; stringEnd = %d, %v\n%q", end, ok, ref.i, wantOK, data)
		}
		if !ok && wantOK {
			t.Fatalf("skipStringBlocks refused a valid string ending at %d\n%q", ref.i, data)
		}
	}
}

// Strings of escape-dense text cut and corrupted at every kind of place: runs
// of backslashes across block boundaries, \u escapes (valid and not),
// control bytes, invalid escapes, quotes escaped or not.
func TestSkipStringDifferential(t *testing.T) {
	pieces := []string{`a`, `bc`, ` `, `\n`, `\t`, `\"`, `\\`, `\\\\`, `\\\"`, `\/`, `\u001b`, `\uD83D\uDE00`,
		`\u12`, `\x`, "\x01", "\t", `"`, `é`, "\xff", strings.Repeat("x", 63), strings.Repeat(`\\`, 33)}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var b bytes.Buffer
		b.WriteByte('"')
		for n := r.IntN(80); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(4) > 0 {
			b.WriteByte('"')
		}
		b.WriteString(`,"next":1}`)
		checkSkip(t, b.Bytes())
	}
}

func FuzzSkipString(f *testing.F) {
	f.Add([]byte(`"` + strings.Repeat(`ab\"c\\d\n`, 20) + `"`))
	f.Add([]byte(`"` + strings.Repeat("x", 63) + `\` + `"` + strings.Repeat("y", 70) + `"`))
	f.Add([]byte(`"` + strings.Repeat(`\\`, 40) + `\u00e9` + strings.Repeat("z", 64) + `"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSkip(t, append([]byte{'"'}, data...))
	})
}
