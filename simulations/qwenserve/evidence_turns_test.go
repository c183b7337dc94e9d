package qwenserve

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// TestEvidenceTurnVerdicts decides the crash states the real 0.24.4 daemon
// left (testdata/evidence, the cases TestEvidence reconciles) from the
// transcript alone, through qwen.Harness and machines/turnverdict (ADR
// 0041), and fails on a wrong verdict on any turn whose id is a prompt the
// case names. The writer is taken as stopped: each case is a killed tree.
func TestEvidenceTurnVerdicts(t *testing.T) {
	cases, err := filepath.Glob("testdata/evidence/*/case.txt")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no evidence: %v", err)
	}
	var scored, right, unknown, lastScored int
	for _, c := range cases {
		dir := filepath.Dir(c)
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		var sid string
		truth := map[string]Truth{}
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) == 2 && f[0] == "session":
				sid = f[1]
			case len(f) == 3 && f[0] == "prompt":
				truth[f[1]] = Truth(f[2])
			}
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "projects", "*", "chats", sid+".jsonl"))
		if len(paths) != 1 {
			continue // a case whose transcript was never created
		}
		data, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(data), qwen.Harness()), turnverdict.Options{WriterStopped: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range ds {
			tr, ok := truth[d.Turn]
			if !ok {
				continue
			}
			scored++
			if i == len(ds)-1 {
				lastScored++
			}
			term := ""
			if d.Verdict != turnverdict.Unknown {
				term = string(d.Verdict)
			}
			switch Judge(term, tr, false) {
			case Wrong:
				t.Errorf("%s: turn %s (truth %s): turnverdict says %s\n%s", filepath.Base(dir), d.Turn, tr, d.Verdict, d.Describe())
			case Unknown:
				unknown++
			default:
				right++
			}
		}
	}
	t.Logf("real-daemon crash states: %d turns name a prompt of their case (%d of them a file's last turn): %d right, %d unknown", scored, lastScored, right, unknown)
	if scored == 0 {
		t.Fatal("no turn named a prompt of its case")
	}
}
