package qwen

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// checkSkip: skipString, stringEnd and jsonscan.String (by blocks, with
// AVX2 where the CPU has it) agree with the scalar stringEndScalar on the
// string starting at data[0] (a quote).
func checkSkip(t *testing.T, data []byte) {
	t.Helper()
	var ref, got, kept scanner
	ref.reset(data)
	wantEsc, wantPlain, wantOK := ref.stringEndScalar()
	got.reset(data)
	gotOK := got.skipString()
	if gotOK != wantOK || gotOK && got.i != ref.i || !gotOK && (got.err == nil || got.err.off != ref.err.off) {
		t.Fatalf("skipString = %v at %d (%v), stringEndScalar = %v at %d (%v)\n%q", gotOK, got.i, got.err, wantOK, ref.i, ref.err, data)
	}
	kept.reset(data)
	esc, plain, ok := kept.stringEnd()
	if ok != wantOK || kept.i != ref.i || ok && (esc != wantEsc || plain != wantPlain) || !ok && *kept.err != *ref.err {
		t.Fatalf("stringEnd = %v, %v, %v at %d (%v); stringEndScalar = %v, %v, %v at %d (%v)\n%q",
			esc, plain, ok, kept.i, kept.err, wantEsc, wantPlain, wantOK, ref.i, ref.err, data)
	}
	if len(data) > 0 {
		end, jesc, nonASCII, err := jsonscan.String(data, 0)
		if (err == nil) != wantOK || wantOK && (end != ref.i || jesc != wantEsc || (!jesc && !nonASCII) != wantPlain) {
			t.Fatalf("jsonscan.String = %d, %v, %v, %v; stringEndScalar = %d, %v, %v, %v\n%q",
				end, jesc, nonASCII, err, ref.i, wantEsc, wantPlain, wantOK, data)
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
