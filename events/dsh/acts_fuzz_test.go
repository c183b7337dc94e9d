package dsh_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// FuzzHarness feeds arbitrary logs through the dsh harness (codec, mapper,
// fold, verdicts): it never panics, every act lies inside the input, and
// every verdict is one of the three. The log is read once: the verdicts
// are decided from the acts read (turn.Read is deterministic, and an Act
// holds no buffer of the reader's), which halves each execution and so
// each minimization. TestMain bounds minimization (main_test.go), which
// is what stalled this fuzzer; run:
//
//	go test -run='^$' -fuzz='^FuzzHarness$' -fuzztime=60s -parallel 1 ./events/dsh
func FuzzHarness(f *testing.F) {
	ex, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	// The example's first and last lines as seeds, not the whole 3.6 KB
	// log: minimizing a new input costs the square of its length.
	lines := bytes.SplitAfter(ex, []byte("\n"))
	f.Add(bytes.Join(lines[:10], nil))
	f.Add(bytes.Join(lines[20:], nil))
	f.Add([]byte("{\"type\":\"session\",\"version\":1,\"id\":\"s\",\"createdAt\":1}\n{\"type\":\"turn/end\",\"seq\":0,\"time\":1,\"data\":{\"turn\":1,\"reason\":{\"kind\":\"aborted\",\"reason\":\"user\"}}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var acts []turn.Act
		for a, err := range turn.Read(bytes.NewReader(b), dsh.Harness()) {
			if err != nil {
				t.Fatal(err)
			}
			if a.Pos.Offset < 0 || a.Pos.Offset > int64(len(b)) {
				t.Fatalf("act %s at offset %d of %d bytes", a.Describe(), a.Pos.Offset, len(b))
			}
			acts = append(acts, a)
		}
		ds, err := turnverdict.DecideAll(func(yield func(turn.Act, error) bool) {
			for _, a := range acts {
				if !yield(a, nil) {
					return
				}
			}
		}, turnverdict.Options{WriterStopped: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Verdict != turnverdict.Completed && d.Verdict != turnverdict.Interrupted && d.Verdict != turnverdict.Unknown {
				t.Fatalf("verdict %q", d.Verdict)
			}
		}
	})
}
