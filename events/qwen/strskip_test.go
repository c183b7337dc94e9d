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

// TestStringEndShortRun holds stringEnd's word path (strings ending within
// shortRun bytes) to stringEndScalar: every body length around and past it,
// with a non-ASCII byte, a backslash escape, a control byte or an
// unterminated end at every position, and every count of bytes after the
// string up to a word and a half (the path reads whole words only).
func TestStringEndShortRun(t *testing.T) {
	odd := []string{"é", "\xff", `\n`, `\"`, `\u00e9`, `\u12`, `\x`, "\x01", "\x7f"}
	for n := 0; n <= shortRun+9; n++ {
		for pos := -1; pos < n; pos++ {
			for _, o := range odd {
				body := []byte(strings.Repeat("a", n))
				if pos >= 0 {
					body = append(body[:pos:pos], append([]byte(o), body[pos:]...)...)
				}
				for _, closed := range []bool{true, false} {
					for after := 0; after <= 12; after++ {
						data := append([]byte{'"'}, body...)
						if closed {
							data = append(data, '"')
						}
						data = append(data, strings.Repeat("}", after)...)
						checkSkip(t, data)
					}
				}
				if pos < 0 {
					break // no odd piece: one body
				}
			}
		}
	}
}
