package main

import (
	"bytes"
	"context"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestPeakHeapProfile is a measuring tool, not a check: it runs one command
// line in process under the CLI's GC settings and writes the heap profile
// taken at the largest live heap of the run (sampled every 5 ms, rewritten
// at each new maximum 5% above the last), so that `go tool pprof
// -sample_index=inuse_space` shows what a command holds at its peak rather
// than at its end. Skipped unless TAILPROOF_PEAK_HEAP_ARGS is set:
//
//	go test -c -o /tmp/tp.test ./cmd/tailproof
//	TAILPROOF_PEAK_HEAP_ARGS="reconcile --dry-run --qwen-runtime DIR --cwd /bench/workspace --session ID" \
//	TAILPROOF_PEAK_HEAP_PROFILE=/tmp/peak.pprof /tmp/tp.test -test.run PeakHeapProfile -test.v
func TestPeakHeapProfile(t *testing.T) {
	args := os.Getenv("TAILPROOF_PEAK_HEAP_ARGS")
	out := os.Getenv("TAILPROOF_PEAK_HEAP_PROFILE")
	if args == "" || out == "" {
		t.Skip("a measuring tool: set TAILPROOF_PEAK_HEAP_ARGS and TAILPROOF_PEAK_HEAP_PROFILE")
	}
	tuneGC()
	done, stopped := make(chan struct{}), make(chan struct{})
	var werr error
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak+peak/20 {
				peak = v
				var b bytes.Buffer
				if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
					werr = err
					return
				}
				if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
					werr = err
					return
				}
				t.Logf("live heap %d MiB", v>>20)
			}
		}
	}()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), strings.Fields(args), &stdout, &stderr)
	close(done)
	<-stopped
	if werr != nil {
		t.Fatal(werr)
	}
	t.Logf("exit %d\nstdout: %.500s\nstderr: %.500s", code, stdout.String(), stderr.String())
}
