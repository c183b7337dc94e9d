package v0_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// scanWith scans data with GOMAXPROCS procs: 1 decodes inline, more decodes
// ahead on a goroutine (pipeline.go). It returns every visited record's
// JSON, the result and the error text.
func scanWith(t *testing.T, procs int, data []byte, stopAfter int) ([]string, v0.Result, string) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var got []string
	errStop := errors.New("stop")
	res, err := v0.Scan(bytes.NewReader(data), v0.Zstd, v0.Options{}, func(r v0.Record) error {
		if stopAfter >= 0 && len(got) == stopAfter {
			return errStop
		}
		got = append(got, string(r.AppendJSON(nil)))
		return nil
	})
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return got, res, msg
}

// The pipelined scan is the sequential one run on two goroutines: on every
// cut of a log, on a log with a damaged frame in the middle, and when the
// visitor stops the scan, both give the same records, result and error.
func TestPipelineMatchesSequential(t *testing.T) {
	full := zstdLog(t)
	damaged := bytes.Clone(full)
	damaged[len(damaged)/2] ^= 0x40
	type input struct {
		name string
		data []byte
		stop int
	}
	var inputs []input
	for n := 0; n <= len(full); n++ {
		inputs = append(inputs, input{fmt.Sprintf("cut %d", n), full[:n], -1})
	}
	inputs = append(inputs, input{"damaged", damaged, -1})
	// Frames that cut lines (dsh writes whole lines per frame; a reader
	// still joins them): every line split at its middle across two frames.
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	split := w.EncodeAll([]byte(header+"\n"), nil)
	rest := strings.Join(batches, "\n") + "\n"
	for len(rest) > 0 {
		n := min(len(rest), 37)
		split = w.EncodeAll([]byte(rest[:n]), split)
		rest = rest[n:]
	}
	inputs = append(inputs, input{"split lines", split, -1})
	// Logs of many jobs (a job batches frames up to 16 KB or 256 frames):
	// whole, cut, damaged, stopped early.
	for _, shape := range []string{"chunks", "packed", "tools"} {
		big, _ := benchLog(t, shape, 120)
		inputs = append(inputs, input{shape, big, -1}, input{shape + " stopped", big, 5000})
		for _, n := range []int{len(big) / 3, len(big) / 2, len(big) - 1} {
			inputs = append(inputs, input{fmt.Sprintf("%s cut %d", shape, n), big[:n], -1})
			bad := bytes.Clone(big)
			bad[n] ^= 0x10
			inputs = append(inputs, input{fmt.Sprintf("%s damaged at %d", shape, n), bad, -1})
		}
	}
	for n := 0; n <= len(split); n += 7 {
		inputs = append(inputs, input{fmt.Sprintf("split lines cut %d", n), split[:n], -1})
	}
	for stop := 0; stop < 10; stop++ {
		inputs = append(inputs, input{fmt.Sprintf("visitor stops at %d", stop), full, stop})
	}
	for _, in := range inputs {
		seqRecs, seqRes, seqErr := scanWith(t, 1, in.data, in.stop)
		pipeRecs, pipeRes, pipeErr := scanWith(t, 2, in.data, in.stop)
		if in.name == "split lines" && (len(seqRecs) != 10 || seqErr != "") {
			t.Fatalf("split lines: %d records, %s", len(seqRecs), seqErr)
		}
		if d := cmp.Diff([]any{seqRecs, seqRes, seqErr}, []any{pipeRecs, pipeRes, pipeErr}); d != "" {
			t.Fatalf("%s: pipelined scan differs (-sequential +pipelined):\n%s", in.name, d)
		}
	}
}

// watched fails the test when it is read after closed is set.
type watched struct {
	r      *bytes.Reader
	closed atomic.Bool
	t      *testing.T
}

func (w *watched) Read(p []byte) (int, error) {
	if w.closed.Load() {
		w.t.Error("input read after Scan returned")
	}
	return w.r.Read(p[:min(len(p), 7)]) // small reads: the producer is mid-frame when stopped
}

// A scan's producer goroutine no longer reads the input when Scan returns,
// whatever ended the scan.
func TestPipelineStopsReading(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	full := append(zstdLog(t), zstdLog(t)[len(zstdLog(t))/2:]...)
	for stop := 0; stop < 10; stop++ {
		for _, data := range [][]byte{full, full[:len(full)-3]} {
			w := &watched{r: bytes.NewReader(data), t: t}
			n := 0
			_, _ = v0.Scan(w, v0.Zstd, v0.Options{}, func(v0.Record) error {
				if n++; n > stop {
					return errors.New("stop")
				}
				return nil
			})
			w.closed.Store(true)
		}
	}
	time.Sleep(10 * time.Millisecond) // a stray producer would read now
}
