package qwen

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRepeatedFieldsSequence: one parser reads a sequence of records whose
// sessionId, cwd and version repeat, change, are spelled with escapes, are
// not strings, are duplicated or are cut short, and every line decodes as
// the stateless encoding/json reference decodes it alone — whatever value
// the parser saw last (sameString, parseObject's seen).
func TestRepeatedFieldsSequence(t *testing.T) {
	values := []string{`"S"`, `"S"`, `"S"`, `"SA"`, `"S\u0041"`, `"\u0053"`, `""`, `7`, `null`, `"é"`, `"S\"`, ` "S"`,
		`"00000000-0000-4000-8000-000000000000"`, `"00000000-0000-4000-8000-000000000000"`, `"00000000-0000-4000-8000-00000000000"`}
	member := func(r *rand.Rand, key string) string {
		v := values[r.IntN(len(values))]
		switch r.IntN(8) {
		case 0:
			return ""
		case 1: // a duplicate: the later wins
			return fmt.Sprintf(`,%q:%s,%q:%s`, key, v, key, values[r.IntN(len(values))])
		}
		return fmt.Sprintf(`,%q:%s`, key, v)
	}
	r := rand.New(rand.NewPCG(16, 2026))
	for _, light := range []bool{false, true} {
		p := recordParser{light: light}
		for n := range 6000 {
			line := fmt.Sprintf(`{"uuid":"u%d","parentUuid":null`, n) + member(r, "sessionId") + member(r, "cwd") +
				`,"type":"user"` + member(r, "version") + `}`
			if r.IntN(10) == 0 {
				line = line[:r.IntN(len(line))] // cut: the value seen last must not change on a failed parse either
			}
			want := refDecodeLine([]byte(line), DecodeOptions{})
			var got lineResult
			p.decodeLine([]byte(line), &got)
			if got.complete != want.complete || len(got.recs) != len(want.recs) {
				t.Fatalf("line %d %s: complete %v with %d records, reference %v with %d", n, line, got.complete, len(got.recs), want.complete, len(want.recs))
			}
			for i := range got.recs {
				g := &got.recs[i]
				checkIdent(t, g)
				if light {
					if w := want.recs[i]; string(g.id.session) != w.rec.SessionID || string(g.id.cwd) != w.rec.Cwd || g.session != w.session {
						t.Fatalf("line %d %s: light identity %q %q, reference %q %q", n, line, g.id.session, g.id.cwd, w.rec.SessionID, w.rec.Cwd)
					}
					continue
				}
				if d := cmp.Diff(want.recs[i], g, cmpRecords...); d != "" {
					t.Fatalf("line %d %s: (-reference +scanner):\n%s", n, line, d)
				}
			}
		}
	}
}
