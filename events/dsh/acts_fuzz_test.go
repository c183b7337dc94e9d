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
// every verdict is one of the three.
func FuzzHarness(f *testing.F) {
	ex, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	// The example's first lines as seeds: with the whole 3.6 KB log as a
	// seed, Go's fuzzing engine stalls between executions on this machine
	// (no execution ran long: a 300 ms watchdog in the body never fired).
	lines := bytes.SplitAfter(ex, []byte("\n"))
	f.Add(bytes.Join(lines[:10], nil))
	f.Add(bytes.Join(lines[20:], nil))
	f.Add([]byte("{\"type\":\"session\",\"version\":1,\"id\":\"s\",\"createdAt\":1}\n{\"type\":\"turn/end\",\"seq\":0,\"time\":1,\"data\":{\"turn\":1,\"reason\":{\"kind\":\"aborted\",\"reason\":\"user\"}}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for a, err := range turn.Read(bytes.NewReader(b), dsh.Harness()) {
			if err != nil {
				t.Fatal(err)
			}
			if a.Pos.Offset < 0 || a.Pos.Offset > int64(len(b)) {
				t.Fatalf("act %s at offset %d of %d bytes", a.Describe(), a.Pos.Offset, len(b))
			}
		}
		ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(b), dsh.Harness()), turnverdict.Options{WriterStopped: true})
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
