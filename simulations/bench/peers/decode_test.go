package peers_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/simulations/bench/peers"
	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// The side-by-side decode benchmark (issue #15: each harness decodes at
// least as fast as the Qwen codec, on every shape). Each codec reads its
// shape's file from disk through events.Decode on the open file, as the
// CLI reads a Codex or Claude session — the same loop for all three — and
// the three alternate within every iteration
// (the first one rotating), so a change in the machine's load falls on all
// of them alike. Each decode's CPU time is the process's
// (CLOCK_PROCESS_CPUTIME_ID, garbage collection included); the reported
// codex/qwen and claude/qwen are the medians over the rounds of the ratio
// of MB per CPU-second in the same round, which load cancels out of far
// better than it does out of runs of separate benchmarks. simulations/harness/decodebench.sh runs it several
// times and reports each figure's median and spread.

// size is each file's size: 16 MiB, as the per-codec BenchmarkDecode.
const size = 16 << 20

type harness struct {
	name  string
	codec events.Codec
	write func(name string) ([]byte, error)
}

var harnesses = []harness{
	{"qwen", qwen.Codec{}, func(name string) ([]byte, error) {
		var b bytes.Buffer
		_, err := shape.Write(&b, peers.Qwen(name, size))
		return b.Bytes(), err
	}},
	{"codex", codex.Codec{}, func(name string) ([]byte, error) { return peers.Codex(name, size) }},
	{"claude", claude.Codec{}, func(name string) ([]byte, error) { return peers.Claude(name, size) }},
}

var (
	dir   string
	files sync.Map // shape/harness → path
)

func TestMain(m *testing.M) {
	if only := os.Getenv("TAILPROOF_DECODE_ONLY"); only != "" {
		// One harness alone (its ratios then read 1): for counting one
		// codec's instructions under valgrind, where load does not matter
		// but the other codecs' would be counted too.
		harnesses = slices.DeleteFunc(harnesses, func(h harness) bool { return h.name != only })
		for len(harnesses) < 3 {
			harnesses = append(harnesses, harnesses[0])
		}
	}
	var err error
	if dir, err = os.MkdirTemp("", "tailproof-decode-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// file writes the shape's file of h once and returns its path and size.
func file(tb testing.TB, h harness, name string) (string, int64) {
	key := name + "/" + h.name
	if p, ok := files.Load(key); ok {
		st, err := os.Stat(p.(string))
		if err != nil {
			tb.Fatal(err)
		}
		return p.(string), st.Size()
	}
	data, err := h.write(name)
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(dir, name+"."+h.name+".jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	files.Store(key, p)
	return p, int64(len(data))
}

// cpuNanos is the CPU time of the process (all threads) in nanoseconds.
func cpuNanos() int64 {
	var ts syscall.Timespec
	const clockProcessCPUTime = 2
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return ts.Nano()
}

// decodeFile reads path through events.Decode and c, and returns how many
// events it decoded.
func decodeFile(tb testing.TB, c events.Codec, path string, o events.Options) int {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	n := 0
	for _, err := range events.Decode(f, c, o) {
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		n++
	}
	return n
}

// median is the middle of xs (the mean of the middle two for an even count):
// a round a burst of load fell on is an outlier one way, which the median
// of the rounds' ratios ignores and their mean would not.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkSideBySide reports, per shape, each harness's MB per CPU-second
// over the run and the median over the rounds of Codex's and Claude's
// figure over Qwen's in the same round, each file read by events.Decode as
// the CLI reads a Codex or Claude session: with the fused line read where
// the codec offers it (events.FusedCodec; Qwen's codec does not, and is
// read as before: each line framed, then DecodeLine).
func BenchmarkSideBySide(b *testing.B) { sideBySide(b, events.Options{}) }

// BenchmarkSideBySideFramed is BenchmarkSideBySide with every line framed
// first (events.Options.NoFuse): the codecs' DecodeLine compared alone.
func BenchmarkSideBySideFramed(b *testing.B) { sideBySide(b, events.Options{NoFuse: true}) }

func sideBySide(b *testing.B, o events.Options) {
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) {
			var (
				paths  [3]string
				sizes  [3]int64
				cpu    [3]int64
				counts [3]int
				ratios [2][]float64 // per round: codex/qwen, claude/qwen
			)
			for k, h := range harnesses {
				paths[k], sizes[k] = file(b, h, name)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				var round [3]int64
				for j := range harnesses {
					k := (i + j) % len(harnesses)
					start := cpuNanos()
					n := decodeFile(b, harnesses[k].codec, paths[k], o)
					round[k] = max(cpuNanos()-start, 1)
					cpu[k] += round[k]
					if counts[k] == 0 {
						counts[k] = n
					} else if n != counts[k] {
						b.Fatalf("%s decoded %d events, then %d", harnesses[k].name, counts[k], n)
					}
				}
				for k := range ratios {
					// MB per CPU-second of harness k+1 over Qwen's, this round.
					ratios[k] = append(ratios[k], float64(sizes[k+1])*float64(round[0])/(float64(sizes[0])*float64(round[k+1])))
				}
				i++
			}
			for k, h := range harnesses {
				b.ReportMetric(float64(sizes[k])*float64(i)*1e3/float64(max(cpu[k], 1)), h.name+"-MB/cpu-s")
			}
			b.ReportMetric(median(ratios[0]), "codex/qwen")
			b.ReportMetric(median(ratios[1]), "claude/qwen")
		})
	}
}
