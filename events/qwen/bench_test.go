package qwen

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/events"
)

// synthTranscript writes a realistic transcript of about size bytes: turns
// of a user prompt, an assistant function call, a tool result whose output
// (and its resultDisplay copy, as Qwen writes it) is large shell output with
// escapes, and an assistant reply with a thought.
func synthTranscript(w io.Writer, size int64) (int64, int) {
	return synth(w, size, 24<<10)
}

// synth is synthTranscript with tool outputs of about outBytes bytes.
func synth(w io.Writer, size int64, outBytes int) (int64, int) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var out strings.Builder
	for i := 0; out.Len() < outBytes; i++ {
		fmt.Fprintf(&out, "drwxr-xr-x  5 user staff  160 Jan  1 00:00 dir-%04d\\n\\t\\\"quoted\\\" path/to/file_%d.go:%d: ok\\n", i, i, i*7)
	}
	output := out.String()
	var written int64
	n, parent := 0, "null"
	emit := func(s string) {
		m, _ := bw.WriteString(s)
		bw.WriteByte('\n')
		written += int64(m) + 1
		n++
	}
	for turn := 0; written < size; turn++ {
		ts := fmt.Sprintf("2026-01-01T%02d:%02d:%02d.%03dZ", turn/3600%24, turn/60%60, turn%60, turn%1000)
		id := func(k int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", turn, k) }
		emit(`{"uuid":"` + id(1) + `","parentUuid":` + parent + `,"sessionId":"5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d","timestamp":"` + ts + `","type":"user","provenance":"real_user","cwd":"/work/demo","version":"0.24.4","promptId":"p-` + strconv.Itoa(turn) + `","message":{"role":"user","parts":[{"text":"List the files and run the tests for package ` + strconv.Itoa(turn) + `"}]}}`)
		emit(`{"uuid":"` + id(2) + `","parentUuid":"` + id(1) + `","sessionId":"5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d","timestamp":"` + ts + `","type":"assistant","provenance":"assistant_output","cwd":"/work/demo","version":"0.24.4","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"functionCall":{"id":"call_` + id(2)[:8] + `","name":"run_shell_command","args":{"command":"ls -la && go test ./...","description":"list and test"}}}]},"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":40,"totalTokenCount":1240}}`)
		emit(`{"uuid":"` + id(3) + `","parentUuid":"` + id(2) + `","sessionId":"5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d","timestamp":"` + ts + `","type":"tool_result","provenance":"tool_result","cwd":"/work/demo","version":"0.24.4","message":{"role":"user","parts":[{"functionResponse":{"id":"call_` + id(2)[:8] + `","name":"run_shell_command","response":{"output":"` + output + `"}}}]},"toolCallResult":{"callId":"call_` + id(2)[:8] + `","status":"success","resultDisplay":"` + output + `"}}`)
		emit(`{"uuid":"` + id(4) + `","parentUuid":"` + id(3) + `","sessionId":"5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d","timestamp":"` + ts + `","type":"assistant","provenance":"assistant_output","cwd":"/work/demo","version":"0.24.4","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"The tests pass; I looked at the listing first.","thought":true},{"text":"All tests pass."}]}}`)
		parent = `"` + id(4) + `"`
	}
	bw.Flush()
	return written, n
}

// cpuSeconds is the process's user+system CPU time. Reported throughput per
// CPU second is the per-core figure, independent of how busy a shared
// machine is (wall-clock MB/s is not).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// reportCPU adds the MB-per-CPU-second metric for n iterations over size bytes.
func reportCPU(b *testing.B, start float64, size int64) {
	if used := cpuSeconds() - start; used > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/used, "MB/cpu-s")
	}
}

// BenchmarkDecode measures the codec alone (line framing included) on an
// in-memory transcript dominated by large tool outputs.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	size, _ := synthTranscript(&buf, 16<<20)
	data := buf.Bytes()
	b.SetBytes(size)
	b.ReportAllocs()
	c := Codec{}
	var evs []events.Event
	cpu := cpuSeconds()
	for b.Loop() {
		for line, err := range events.Lines(bytes.NewReader(data), 0) {
			if err != nil {
				b.Fatal(err)
			}
			evs, err = c.DecodeLine(evs[:0], line)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu, size)
}

// BenchmarkDecodeReference is the encoding/json reference on the same
// input, for comparison.
func BenchmarkDecodeReference(b *testing.B) {
	var buf bytes.Buffer
	size, _ := synthTranscript(&buf, 16<<20)
	data := buf.Bytes()
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := cpuSeconds()
	for b.Loop() {
		for line, err := range events.Lines(bytes.NewReader(data), 0) {
			if err != nil {
				b.Fatal(err)
			}
			refDecodeLine(line.Bytes, DecodeOptions{})
		}
	}
	reportCPU(b, cpu, size)
}

// BenchmarkLoadChain runs both passes (LoadChain, then Walk) over a
// transcript file of TAILPROOF_BENCH_BYTES bytes (default 256 MiB; set
// 1073741824 for the 1 GiB figure). MB/s counts the file once per pass pair;
// peak-heap-MiB is the largest HeapInuse sampled every 20 ms during the run (ReadMemStats stops the world, so sampling is sparse).
func BenchmarkLoadChain(b *testing.B) { benchLoadChain(b, 256<<20, 24<<10) }

// BenchmarkLoadChainSmallRecords is the index's worst case: many small
// records (tool outputs of ~200 bytes, about 600 bytes per record), where
// the per-record index, not the line buffer, dominates the heap.
// TAILPROOF_BENCH_BYTES sets the size here too (default 64 MiB).
func BenchmarkLoadChainSmallRecords(b *testing.B) { benchLoadChain(b, 64<<20, 200) }

func benchLoadChain(b *testing.B, size int64, outBytes int) {
	if s := os.Getenv("TAILPROOF_BENCH_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		size = v
	}
	path := filepath.Join(b.TempDir(), "5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	written, records := synth(f, size, outBytes)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	b.SetBytes(written)
	b.ResetTimer()
	cpu := cpuSeconds()
	for b.Loop() {
		c, err := LoadChain(open, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := c.Walk(open, func(i int, ev events.Event) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != records || !c.Streaming || c.Degraded() != "" {
			b.Fatalf("walked %d of %d records, streaming=%v, degraded=%q", n, records, c.Streaming, c.Degraded())
		}
	}
	b.StopTimer()
	reportCPU(b, cpu, written)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(base.HeapInuse)/(1<<20), "base-heap-MiB")
	b.ReportMetric(float64(records), "records")
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/float64(records), "heap-B/record")
}
