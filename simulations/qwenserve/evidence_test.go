package qwenserve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// TestEvidence reconciles crash states the real 0.24.4 daemon left (kept
// with --keep, a few KB each; each case.txt says how it was produced and
// what the mock's log says happened) and fails on a wrong terminal. An
// unknown is logged with its guard; a case.txt line "decided <prompt>"
// says the files prove that prompt's terminal, and an unknown there fails
// too (the rules of ADR 0023 2026-12-01 and ADR 0031 decide them).
func TestEvidence(t *testing.T) {
	cases, err := filepath.Glob("testdata/evidence/*/case.txt")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no evidence: %v", err)
	}
	for _, c := range cases {
		dir := filepath.Dir(c)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			var cwd, sid string
			truth := map[string]Truth{}
			decided := map[string]bool{}
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) == 2 && f[0] == "cwd":
					cwd = f[1]
				case len(f) == 2 && f[0] == "session":
					sid = f[1]
				case len(f) == 3 && f[0] == "prompt":
					truth[f[1]] = Truth(f[2])
				case len(f) == 2 && f[0] == "decided":
					decided[f[1]] = true
				}
			}
			if cwd == "" || sid == "" || len(truth) == 0 {
				t.Fatalf("%s: needs cwd, session and prompt lines", c)
			}
			st := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(dir, cwd))
			res, err := tailproof.Reconcile(context.Background(), st, sid, tailproof.Options{Now: func() int64 { return 4102444800000 }, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Dangling) != len(truth) {
				t.Errorf("dangling %v, case.txt names %d prompts", res.Dangling, len(truth))
			}
			for _, d := range res.Decisions {
				tr, ok := truth[d.Target]
				if !ok {
					t.Errorf("decision for %s, which case.txt does not name", d.Target)
					continue
				}
				term := ""
				if d.Appended != nil {
					term = string(d.Appended.Terminal)
				}
				switch Judge(term, tr, false) {
				case Wrong:
					t.Errorf("%s (truth %s): tailproof stamps %s", d.Target, tr, term)
				case Unknown:
					why := ""
					if len(d.Vetoes) > 0 {
						why = d.Vetoes[0].String()
					}
					if decided[d.Target] {
						t.Errorf("%s (truth %s): the files decide it, tailproof left it unknown: %s", d.Target, tr, why)
					} else {
						t.Logf("%s (truth %s): unknown: %s", d.Target, tr, why)
					}
				}
			}
		})
	}
}
