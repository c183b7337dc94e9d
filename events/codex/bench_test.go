package codex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
	"github.com/tailproof/tailproof/simulations/bench/peers"
	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// rollout is the benchmarks' input: about size bytes of the shape's turns
// (simulations/bench/peers.Codex).
func rollout(tb testing.TB, name string, size int) []byte {
	data, err := peers.Codex(name, size)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkDecode runs the codec on 16 MiB of each content shape of
// simulations/bench/shape, as the Qwen codec's BenchmarkDecode does.
func BenchmarkDecode(b *testing.B) {
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchDecode(b, codex.Harness(), rollout(b, name, 16<<20)) })
	}
}

// BenchmarkVerdicts is decode, map, fold and decide over the same shapes.
func BenchmarkVerdicts(b *testing.B) {
	decide := func(r *bytes.Reader) error {
		_, err := turnverdict.DecideAll(turn.Read(r, codex.Harness()), turnverdict.Options{WriterStopped: true})
		return err
	}
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchVerdicts(b, codex.Harness(), rollout(b, name, 16<<20), decide) })
	}
}

// TestBenchRolloutDecides keeps the benchmark's input honest: every turn of
// it is a completed turn.
func TestBenchRolloutDecides(t *testing.T) {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(rollout(t, "mixed", 1<<20)), codex.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil || len(ds) == 0 {
		t.Fatal(err, len(ds))
	}
	for _, d := range ds {
		if d.Verdict != turnverdict.Completed {
			t.Fatalf("%s", d.Describe())
		}
	}
}

// BenchmarkRecord is the per-record work alone: the lines of the first ten
// turns of the small shape, decoded one by one from memory (no framing),
// ns and allocations per record.
func BenchmarkRecord(b *testing.B) {
	turntest.BenchRecords(b, codex.Codec{}, rollout(b, "small", 1<<20), 10*15)
}

// TestFusedShapes: on every bench shape, the fused line read decodes what
// framing each line first does (the scenario files check the damaged and
// odd lines).
func TestFusedShapes(t *testing.T) {
	for _, name := range shape.Names {
		turntest.SameFused(t, codex.Harness(), rollout(t, name, 256<<10))
	}
	// A file of 4 MiB or more is read through the larger buffer.
	turntest.SameFused(t, codex.Harness(), rollout(t, "mixed", 5<<20))
}

// BenchmarkDecodeFused is BenchmarkDecode the way the CLI reads a rollout
// (and simulations/bench/peers' side-by-side benchmark): the file opened
// from disk and read through events.Decode, fused (ADR 0044), with the
// input not held in memory, so that the heap, and with it how often the
// collector runs, is the decode's own. For this codec's allocations,
// profile and instruction counts.
func BenchmarkDecodeFused(b *testing.B) {
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "rollout.jsonl")
			data := rollout(b, name, 16<<20)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			size := len(data)
			b.SetBytes(int64(size))
			data = nil
			runtime.GC()
			b.ReportAllocs()
			cpu := cpuSeconds()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range events.Decode(f, codex.Codec{}, events.Options{}) {
					if err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
			}
			if used := cpuSeconds() - cpu; used > 0 {
				b.ReportMetric(float64(size)*float64(b.N)/1e6/used, "MB/cpu-s")
			}
		})
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
