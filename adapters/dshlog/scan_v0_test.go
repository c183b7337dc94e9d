package dshlog_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailproof/tailproof/adapters/dshlog"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// The parallel v0 read (ScanV0 with workers) against the inline one
// (v0.Scan): on every input the same records visited in the same order
// (whole Records, unexported fields included), the same Result and the same
// error text — so a torn or corrupt frame is positioned exactly as inline.

// read is what one read of a log produced.
type read struct {
	recs []v0.Record
	res  v0.Result
	err  string
}

var errStop = errors.New("stop")

// limits are parallel bounds: workers (0: the scanner's goroutine decodes
// every batch), batches in flight, compressed bytes, plaintext bytes and
// frames per batch, and 1 when the workers parse ahead. Small ones cross
// many batch boundaries on small logs.
var limits = [][6]int{{1, 1, 0, 0, 1, 0}, {2, 1, 0, 0, 1, 1}, {1, 2, 1, 1, 1, 0}, {2, 2, 1, 1, 1, 1}, {2, 3, 300, 1 << 20, 2, 0}, {3, 6, 4 << 10, 1 << 20, 256, 1},
	{0, 1, 0, 0, 1, 0}, {0, 3, 1 << 20, 500, 256, 1}, {1, 2, 1 << 20, 2000, 256, 0},
	{1, dshlog.BatchesInFlight, dshlog.Batch.Compressed, dshlog.Batch.Plain, dshlog.Batch.Frames, 0}, {4, dshlog.BatchesInFlight, dshlog.Batch.Compressed, dshlog.Batch.Plain, dshlog.Batch.Frames, 1}}

// batchOf is the batch bounds of lim.
func batchOf(lim [6]int) v0.BatchLimits {
	return v0.BatchLimits{Compressed: lim[2], Plain: lim[3], Frames: lim[4]}
}

// collect is a visit keeping a copy of each record in out, stopping with
// errStop after stopAt records when stopAt >= 0.
func (out *read) collect(stopAt int) func(*v0.Record) error {
	return func(r *v0.Record) error {
		if len(out.recs) == stopAt {
			return errStop
		}
		out.recs = append(out.recs, r.Clone())
		return nil
	}
}

// readV0 reads data inline (lim nil) or in parallel, stopping the visit
// with errStop after stopAt records when stopAt >= 0.
func readV0(data []byte, lim *[6]int, stopAt int) read {
	var out read
	visit := out.collect(stopAt)
	var err error
	if lim == nil {
		// By value (v0.Scan), so the parallel read's visits by pointer are
		// compared with Scan's too.
		out.res, err = v0.Scan(bytes.NewReader(data), v0.Zstd, v0.Options{}, func(r v0.Record) error { return visit(&r) })
	} else {
		out.res, err = dshlog.ScanV0Parallel(bytes.NewReader(data), v0.Options{}, visit, lim[0], lim[1], batchOf(*lim), lim[5] == 1)
	}
	if err != nil {
		out.err = err.Error()
	}
	return out
}

var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

// readSteps is the parallel read's steps with the bounds lim run in order
// on this goroutine: the batches the splitter cuts (v0.Batch.Read), each
// decoded as a worker does (Batch.Decode, parsing ahead when lim says) and
// applied as the scanner does (ZstdScanner.Apply). One decoder decodes
// every batch: a batch's result does not depend on which decoder had which
// batches before (the property that lets any worker take any batch).
func readSteps(data []byte, lim [6]int, stopAt int) read {
	var out read
	visit := out.collect(stopAt)
	fr := v0.NewFrameReader(bytes.NewReader(data), 0)
	d := v0.NewFrameDecoder(0)
	defer d.Close()
	var p *v0.Parser
	if lim[5] == 1 {
		p = new(v0.Parser)
	}
	z := v0.NewZstdScanner(v0.Options{}, visit)
	var b v0.Batch
	for {
		b.Read(fr, batchOf(lim))
		b.Decode(d, p)
		if done, err := z.Apply(&b); done || err != nil {
			out.res = z.Result()
			if err != nil {
				out.err = err.Error()
			}
			return out
		}
	}
}

// sameRead fails t unless every parallel read of data equals the inline one.
func sameRead(t *testing.T, data []byte, stopAt int) {
	t.Helper()
	want := readV0(data, nil, stopAt)
	for _, lim := range limits {
		sameAs(t, want, readV0(data, &lim, stopAt), fmt.Sprintf("limits %v, %d bytes, stop at %d: parallel differs from inline (-inline +parallel)", lim, len(data), stopAt))
	}
}

// sameAs fails t, saying where, unless got equals want.
func sameAs(t *testing.T, want, got read, where string) {
	t.Helper()
	if reflect.DeepEqual(want, got) { // every field, unexported ones and row members included; cmp is too slow for thousands of reads
		return
	}
	for k := range min(len(want.recs), len(got.recs)) { // record by record: a diff of long slices is quadratic
		if d := cmp.Diff(want.recs[k], got.recs[k], allFields, cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("%s, record %d:\n%s", where, k, d)
		}
	}
	// DeepEqual holds NaN (a seq or time that is not a number) unequal
	// to itself; cmp with EquateNaNs decides.
	if len(want.recs) != len(got.recs) || want.err != got.err || !cmp.Equal(want.res, got.res, allFields, cmpopts.EquateNaNs()) {
		t.Fatalf("%s: %d records, %d records\n%s", where, len(want.recs), len(got.recs), cmp.Diff(want, got, allFields, cmp.Transformer("len", func(r []v0.Record) int { return len(r) })))
	}
}

// splitAt re-cuts the plaintext of frames at random points, so lines run
// across frames (dsh never writes that; a reader must take it).
func splitAt(r *rand.Rand, frames [][]byte) [][]byte {
	var all []byte
	for _, f := range frames[1:] {
		all = append(all, f...)
	}
	out := [][]byte{frames[0]}
	for len(all) > 0 {
		n := min(1+r.IntN(400), len(all))
		out, all = append(out, all[:n]), all[n:]
	}
	return out
}

func TestScanV0ParallelEqualsInline(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 37))
	for _, shape := range []string{"chunks", "packed", "tools"} {
		frames := v0test.Frames(shape, 3)
		for _, variant := range []string{"as-written", "lines-across-frames"} {
			t.Run(shape+"/"+variant, func(t *testing.T) {
				fs := frames
				if variant != "as-written" {
					fs = splitAt(r, frames)
				}
				data := v0test.Compress(fs)
				sameRead(t, data, -1)
				for range 3 {
					sameRead(t, data, r.IntN(200)) // a visit stops the read
				}
				// Cuts: every byte of the last frame, and anywhere before.
				last := len(data) - len(v0test.Compress(fs[len(fs)-1:]))
				for n := last; n < len(data); n++ {
					sameRead(t, data[:n], -1)
				}
				for range 20 {
					sameRead(t, data[:r.IntN(len(data))], -1)
				}
				// Damage: a flipped bit (checksum or structure), a frame's
				// plaintext made bad JSON or a seq gap.
				for range 20 {
					d := bytes.Clone(data)
					i := r.IntN(len(d))
					d[i] ^= byte(1 << r.IntN(8))
					sameRead(t, d, -1)
				}
				for range 4 {
					bad := append([][]byte(nil), fs...)
					k := 1 + r.IntN(len(bad)-1)
					bad[k] = append([]byte(`{"type":"step/start","seq":0,"time":1,"data":{}}`+"\n"), bad[k]...)
					sameRead(t, v0test.Compress(bad), -1)
					bad[k] = append([]byte("{not json\n"), fs[k]...)
					sameRead(t, v0test.Compress(bad), -1)
				}
			})
		}
	}
}

// A frame with more plaintext than a worker parses ahead is parsed as it is
// applied; the read is the same.
func TestScanV0ParallelLargeFrame(t *testing.T) {
	frames := v0test.Frames("tools", 600)
	var big []byte
	for _, f := range frames[1:] {
		big = append(big, f...)
	}
	if len(big) <= 4<<20 {
		t.Fatalf("the frame is %d bytes, not over the parse-ahead bound", len(big))
	}
	data := v0test.Compress([][]byte{frames[0], frames[1], big[len(frames[1]):]})
	sameRead(t, data, -1)
	sameRead(t, data[:len(data)-7], -1)
}

// While the worker decodes the batch the scanner needs next, the scanner
// decodes later batches itself rather than wait: here the worker is held
// in its first batch until the scanner has decoded two, which a scanner
// that only waited for the worker's batch never does (the hold then gives
// up after 10 s and the test fails). The read equals the inline one.
func TestScanV0ScannerDecodesWhileWorkerBusy(t *testing.T) {
	data := v0test.Compress(v0test.Frames("tools", 100))
	want := readV0(data, nil, -1)
	base := dshlog.ScannerDecodes()
	first, gaveUp := true, false
	hold := func() {
		if !first {
			return
		}
		first = false
		for wait := 10 * time.Second; dshlog.ScannerDecodes()-base < 2; wait -= time.Millisecond {
			if wait <= 0 {
				gaveUp = true
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	var got read
	res, err := dshlog.ScanV0Held(bytes.NewReader(data), got.collect(-1), hold)
	got.res = res
	if err != nil {
		got.err = err.Error()
	}
	if gaveUp {
		t.Fatalf("the scanner decoded %d batches while the worker held the one it needed", dshlog.ScannerDecodes()-base)
	}
	sameAs(t, want, got, "held worker: parallel differs from inline (-inline +parallel)")
}

// counting counts the bytes read from r (atomically: the splitter reads
// while the visit looks).
type counting struct {
	r io.Reader
	n atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestScanV0ParallelBoundedMemory: the parallel read never reads the file
// far ahead of what it applies — at most the batches in flight (each up to
// BatchBytes plus one frame) and the frame reader's 64 KiB buffer — however
// fast the workers are.
func TestScanV0ParallelBoundedMemory(t *testing.T) {
	frames := v0test.Frames("chunks", 1000) // one event per line
	data := v0test.Compress(frames)
	// frameEnd[seq] is the file offset where the frame holding event seq ends.
	var frameEnd []int64
	fr := v0.NewFrameReader(bytes.NewReader(data), 0)
	maxFrame := 0
	for k := 0; ; k++ {
		f, err := fr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		maxFrame = max(maxFrame, len(f.Bytes))
		if k > 0 {
			for range bytes.Count(frames[k], []byte{'\n'}) {
				frameEnd = append(frameEnd, fr.Offset())
			}
		}
	}
	bound := int64(dshlog.BatchesInFlight*(dshlog.Batch.Compressed+maxFrame) + 64<<10 + maxFrame)
	if int64(len(data)) < 4*bound {
		t.Fatalf("the log (%d bytes) is too small to show a bound of %d", len(data), bound)
	}
	c := &counting{r: bytes.NewReader(data)}
	var ahead int64
	_, err := dshlog.ScanV0Parallel(c, v0.Options{}, func(r *v0.Record) error {
		ahead = max(ahead, c.n.Load()-frameEnd[int(r.Seq)])
		return nil
	}, 1, dshlog.BatchesInFlight, dshlog.Batch, false)
	if err != nil {
		t.Fatal(err)
	}
	if ahead > bound {
		t.Fatalf("read %d bytes ahead of the frame being applied; the bound is %d", ahead, bound)
	}
	t.Logf("read at most %d bytes ahead (bound %d, log %d)", ahead, bound, len(data))
}

// FuzzScanV0Parallel: on any input the parallel read's steps, in order,
// equal the inline read. The input is either the file itself (first byte
// even) or plaintext frames separated by NUL, compressed behind a valid
// header frame and cut where the first byte says; the first byte also picks
// the bounds (limits) and where the visit stops.
//
// The fuzzer runs the steps on one goroutine (readSteps), not on the
// workers: its coverage must depend on the input alone. With goroutines,
// how far the splitter ran ahead and which select case won differed from
// run to run, so the fuzzer took nearly every execution for new coverage
// and spent its time minimizing those (46 executions in 60 s).
// TestScanV0ParallelEqualsInline (with -race) and TestOracleV0 test the
// hand-over between the goroutines; small inputs keep each minimization
// short.
//
//	go test -run='^$' -fuzz=FuzzScanV0Parallel -fuzztime=60s ./adapters/dshlog
func FuzzScanV0Parallel(f *testing.F) {
	for _, shape := range []string{"chunks", "packed", "tools"} {
		frames := v0test.Sized(shape, 1, 4, 2)
		f.Add(append([]byte{0}, v0test.Compress(frames)...))
		f.Add(append([]byte{255}, bytes.Join(frames[1:], []byte{0})...))
		f.Add(append([]byte{101}, bytes.Join(frames[1:], []byte{0})...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || len(in) > 1<<13 {
			return
		}
		mode, rest := in[0], in[1:]
		data := rest
		if mode%2 == 1 {
			frames := append([][]byte{[]byte(v0test.Header + "\n")}, bytes.Split(rest, []byte{0})...)
			data = v0test.Compress(frames)
			if mode < 255 {
				data = data[:len(data)*int(mode)/255]
			}
		}
		stop := -1
		if mode%3 != 0 {
			stop = int(mode) % 7
		}
		want := readV0(data, nil, stop)
		for k, lim := range limits {
			if k%4 == int(mode>>1)%4 { // a quarter of the bounds per input
				sameAs(t, want, readSteps(data, lim, stop), fmt.Sprintf("limits %v, %d bytes, stop at %d: the parallel steps differ from inline (-inline +steps)", lim, len(data), stop))
			}
		}
	})
}

func ExampleScanV0() {
	data := v0test.Compress(v0test.Frames("packed", 2))
	events := 0
	res, err := dshlog.ScanV0(bytes.NewReader(data), v0.Zstd, v0.Options{}, func(*v0.Record) error {
		events++
		return nil
	})
	fmt.Println(events == int(res.Events), res.Frames, res.Cut, err)
	// Output: true 7 -1 <nil>
}
