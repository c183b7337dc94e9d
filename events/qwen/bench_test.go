package qwen

import (
	"bytes"
	"go/build"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// Every throughput benchmark runs over the content shapes of
// simulations/bench/shape, the generator the end-to-end benchmark
// (simulations/bench/reconcile.sh) uses: the cost of skipping a tool output
// depends on how many escapes it holds, so one shape cannot stand for all.

// benchNames are the shapes the throughput benchmarks run: the generator's
// own, and "files", whose tool outputs are the text files of Go's source
// tree (content the generator did not write: ~2.7 KB a record, so per-record
// costs dominate; issue #16's real-content case).
var benchNames = append(slices.Clip(shape.Names), "files")

// benchOptions are the shape's options, of about size bytes.
func benchOptions(b *testing.B, name string, size int64) shape.Options {
	o := shape.Options{Shape: name, Bytes: size, Seed: 1,
		SessionID: "5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d", Cwd: "/work/demo", StartMs: 1767225600000}
	if name == "files" {
		files, err := goSourceFiles()
		if err != nil {
			b.Skip("the files shape reads Go's source tree: ", err)
		}
		o.Files = files
	}
	return o
}

var goSourceFiles = sync.OnceValues(func() ([]string, error) {
	return shape.ReadFiles(filepath.Join(build.Default.GOROOT, "src"))
})

// benchTranscript writes about size bytes of the shape to w.
func benchTranscript(b *testing.B, w io.Writer, name string, size int64) shape.Stats {
	st, err := shape.Write(w, benchOptions(b, name, size))
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// memTranscripts caches the in-memory transcripts of the decode benchmarks.
var memTranscripts sync.Map

func memTranscript(b *testing.B, name string) ([]byte, shape.Stats) {
	type entry struct {
		data []byte
		st   shape.Stats
	}
	if e, ok := memTranscripts.Load(name); ok {
		return e.(entry).data, e.(entry).st
	}
	var buf bytes.Buffer
	st := benchTranscript(b, &buf, name, 16<<20)
	memTranscripts.Store(name, entry{buf.Bytes(), st})
	return buf.Bytes(), st
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

// reportCPU adds the MB-per-CPU-second metric for b.N iterations over size bytes.
func reportCPU(b *testing.B, start float64, size int64) {
	if used := cpuSeconds() - start; used > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/used, "MB/cpu-s")
	}
}

// BenchmarkDecode measures the codec alone (line framing included) on 16 MiB
// in memory, per shape.
func BenchmarkDecode(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			data, st := memTranscript(b, name)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var evs []events.Event
			cpu := cpuSeconds()
			for b.Loop() {
				evs = decodeAll(b, data, evs, int(st.Records))
			}
			reportCPU(b, cpu, int64(len(data)))
		})
	}
}

// decodeAll decodes every line of data with the codec, reusing evs, and
// fails unless it yields want records.
func decodeAll(b *testing.B, data []byte, evs []events.Event, want int) []events.Event {
	n := 0
	for line, err := range events.Lines(bytes.NewReader(data), 0) {
		if err != nil {
			b.Fatal(err)
		}
		evs, err = Codec{}.DecodeLine(evs[:0], line)
		if err != nil {
			b.Fatal(err)
		}
		n += len(evs)
	}
	if n != want {
		b.Fatalf("decoded %d of %d records", n, want)
	}
	return evs
}

// BenchmarkDecodeReference is the encoding/json reference on the same
// inputs, for comparison.
func BenchmarkDecodeReference(b *testing.B) {
	for _, name := range []string{"ls", "dense"} {
		b.Run(name, func(b *testing.B) {
			data, _ := memTranscript(b, name)
			b.SetBytes(int64(len(data)))
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
			reportCPU(b, cpu, int64(len(data)))
		})
	}
}

// BenchmarkLoadChain runs both passes (LoadChain, then Walk) over a
// transcript file of TAILPROOF_BENCH_BYTES bytes (default 64 MiB; the README
// figures use 268435456 and 1073741824), per shape. MB/cpu-s counts the file
// once per pass pair; peak-heap-MiB is the largest HeapInuse sampled every
// 20 ms during the run (ReadMemStats stops the world, so sampling is
// sparse). "mixed-rewind" branches every 20th turn.
func BenchmarkLoadChain(b *testing.B) {
	benchShapes(b, func(open Opener, visit func(int, events.Event) error, _ func()) (*Chain, error) {
		c, err := LoadChain(open, LoadOptions{})
		if err != nil {
			return nil, err
		}
		return c, c.Walk(open, visit)
	})
}

// BenchmarkScan is BenchmarkLoadChain with Scan: one pass while the chain
// is linear, a restart and a walk on the rewound shape.
func BenchmarkScan(b *testing.B) {
	benchShapes(b, func(open Opener, visit func(int, events.Event) error, restart func()) (*Chain, error) {
		return Scan(open, LoadOptions{}, visit, restart)
	})
}

type chainReader func(open Opener, visit func(int, events.Event) error, restart func()) (*Chain, error)

func benchShapes(b *testing.B, read chainReader) {
	for _, name := range append(benchNames, "mixed-rewind") {
		b.Run(name, func(b *testing.B) { benchChainFile(b, name, read) })
	}
}

// benchBytes is TAILPROOF_BENCH_BYTES, or def.
func benchBytes(b *testing.B, def int64) int64 {
	if s := os.Getenv("TAILPROOF_BENCH_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	return def
}

// benchChainFile writes the shape to a file and runs read (which reads the
// active chain, calling visit for each record) over it, reporting
// throughput, the peak heap and the heap per record.
func benchChainFile(b *testing.B, name string, read chainReader) {
	path := filepath.Join(b.TempDir(), "5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	opts := benchOptions(b, name, benchBytes(b, 64<<20))
	if name == "mixed-rewind" {
		opts.Shape, opts.RewindEvery = "mixed", 20
	}
	st, err := shape.Write(f, opts)
	if err != nil {
		b.Fatal(err)
	}
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
	wg.Go(func() {
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
	})
	b.SetBytes(st.Bytes)
	b.ResetTimer()
	cpu := cpuSeconds()
	for b.Loop() {
		n := 0
		c, err := read(open, func(i int, ev events.Event) error { n++; return nil }, func() { n = 0 })
		if err != nil {
			b.Fatal(err)
		}
		if c.Len != n || c.Degraded() != "" || opts.RewindEvery == 0 && int64(n) != st.Records {
			b.Fatalf("walked %d of %d records, chain %d, degraded=%q", n, st.Records, c.Len, c.Degraded())
		}
	}
	b.StopTimer()
	reportCPU(b, cpu, st.Bytes)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(st.Records), "records")
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/float64(st.Records), "heap-B/record")
}

// BenchmarkSkipLine is the scanner alone: each line validated as one JSON
// value and skipped, as pass 1 skips a record's payloads, per shape.
func BenchmarkSkipLine(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			data, _ := memTranscript(b, name)
			lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
			b.SetBytes(int64(len(data)))
			var s scanner
			cpu := cpuSeconds()
			for b.Loop() {
				for _, l := range lines {
					s.reset(l)
					if _, ok := s.value(); !ok {
						b.Fatal(s.err)
					}
				}
			}
			reportCPU(b, cpu, int64(len(data)))
		})
	}
}
