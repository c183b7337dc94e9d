package turntest

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// BenchDecode measures h's codec alone (line framing included) over data,
// and reports MB per CPU-second beside the wall-clock MB/s: on a shared
// machine the per-core figure is the comparable one (the Qwen codec's
// BenchmarkDecode reports the same metric).
func BenchDecode(b *testing.B, h turn.Harness, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var evs []events.Event
	cpu := cpuSeconds()
	for b.Loop() {
		for line, err := range events.Lines(bytes.NewReader(data), 0) {
			if err != nil {
				b.Fatal(err)
			}
			if evs, err = h.Codec.DecodeLine(evs[:0], line); err != nil {
				b.Fatal(err)
			}
		}
	}
	if used := cpuSeconds() - cpu; used > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/used, "MB/cpu-s")
	}
}

// BenchVerdicts measures the whole path: decode, map, fold and decide.
func BenchVerdicts(b *testing.B, h turn.Harness, data []byte, decide func(*bytes.Reader) error) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := cpuSeconds()
	for b.Loop() {
		if err := decide(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	if used := cpuSeconds() - cpu; used > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/used, "MB/cpu-s")
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchRecords measures c.DecodeLine alone over the first n lines of data
// (held in memory, so that no framing is measured), per record: the cost a
// codec adds for each line beyond the bytes it scans. cpu-ns/op is the
// process's CPU time per record, which a loaded machine does not inflate as
// it does ns/op.
func BenchRecords(b *testing.B, c events.Codec, data []byte, n int) {
	var lines []events.Line
	for line, err := range events.Lines(bytes.NewReader(data), 0) {
		if err != nil {
			b.Fatal(err)
		}
		line.Bytes = bytes.Clone(line.Bytes)
		if lines = append(lines, line); len(lines) == n {
			break
		}
	}
	size := 0
	for _, l := range lines {
		size += len(l.Bytes) + 1
	}
	b.SetBytes(int64(size) / int64(len(lines)))
	b.ReportAllocs()
	var evs []events.Event
	var err error
	cpu := cpuSeconds()
	for i := 0; b.Loop(); i++ {
		if evs, err = c.DecodeLine(evs[:0], lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu)*1e9/float64(b.N), "cpu-ns/op")
}
