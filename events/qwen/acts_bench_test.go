package qwen_test

import (
	"bytes"
	"testing"

	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// benchSession is about size bytes of the shape's Qwen transcript, built in
// memory (simulations/bench/shape, the generator BenchmarkDecode reads).
func benchSession(tb testing.TB, name string, size int64) []byte {
	var buf bytes.Buffer
	if _, err := shape.Write(&buf, shape.Options{Shape: name, Bytes: size, Seed: 1,
		SessionID: "5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d", Cwd: "/work/demo", StartMs: 1767225600000}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkVerdicts is decode, map (qwen.Harness), fold and decide over 16
// MiB of each shape: the path `status --harness qwen --file` takes without a
// ledger (go test -run '^$' -bench Verdicts -cpu 1 ./events/qwen).
func BenchmarkVerdicts(b *testing.B) {
	decide := func(r *bytes.Reader) error {
		_, err := turnverdict.DecideAll(turn.Read(r, qwen.Harness()), turnverdict.Options{WriterStopped: true})
		return err
	}
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchVerdicts(b, qwen.Harness(), benchSession(b, name, 16<<20), decide) })
	}
}

// TestBenchSessionDecides keeps the benchmark's input honest: every turn of
// the generated session (prompt, calls, answer, turn_result) is completed.
func TestBenchSessionDecides(t *testing.T) {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(benchSession(t, "mixed", 1<<20)), qwen.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil || len(ds) < 2 {
		t.Fatal(err, len(ds))
	}
	for _, d := range ds {
		if d.Verdict != turnverdict.Completed {
			t.Fatalf("%s", d.Describe())
		}
	}
}
