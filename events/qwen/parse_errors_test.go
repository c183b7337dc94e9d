package qwen

import (
	"math/rand/v2"
	"testing"
)

// TestParseObjectErrorsAsSkipper: where a record does not parse, the record
// parser (its own member loop, keyIn, sameString, content and parts) names
// the defect as the value skipper does — the same words at the same offset
// — on every cut of each seed and on seeds with one byte replaced by a byte
// that breaks JSON.
func TestParseObjectErrorsAsSkipper(t *testing.T) {
	breakers := []byte{'}', ']', ',', ':', '"', '\\', 'x', ' ', '\x01', '{', '[', '0', 'n'}
	r := rand.New(rand.NewPCG(16, 3))
	check := func(b []byte) {
		t.Helper()
		if len(b) == 0 || b[0] != '{' {
			return
		}
		var ref scanner
		ref.reset(b)
		_, refOK := ref.value()
		for _, light := range []bool{false, true} {
			p := recordParser{light: light}
			// A record parser that has seen the seed's repeated values.
			p.seen[kSessionID], p.seen[kCwd], p.seen[kVersion] = "S", "/w", "0.24.4"
			var pr parsed
			ok := p.parseObject(b, false, &pr)
			if ok != refOK {
				t.Fatalf("parseObject ok %v, skipper %v (%v)\n%q", ok, refOK, ref.err, b)
			}
			if !ok && (p.s.err.msg != ref.err.msg || p.s.err.off != ref.err.off) {
				t.Fatalf("parseObject: %v; skipper: %v\n%q", p.s.err, ref.err, b)
			}
		}
	}
	for _, seed := range fuzzSeeds {
		b := []byte(seed)
		for cut := range len(b) {
			check(b[:cut])
		}
		for range 300 {
			c := append([]byte(nil), b...)
			c[r.IntN(len(c))] = breakers[r.IntN(len(breakers))]
			check(c)
		}
	}
}
