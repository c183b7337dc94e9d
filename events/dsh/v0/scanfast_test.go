package v0

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// The scanner's compact path (lineScanner.fast: a line parsed where it
// lies, a packed row visited member by member) must be invisible: the same
// visits, Result and error as the line-by-line path on any input. These
// tests read every input both ways and compare whole Records (unexported
// fields included), the Result and the error text.

// owned is a deep copy of r, which is valid only during its visit.
func owned(r Record) Record {
	for _, b := range []*[]byte{&r.Data, &r.SurfaceOp, &r.SourceEventSeqs, &r.Ignorable, &r.raw} {
		*b = bytes.Clone(*b)
	}
	if r.member != nil {
		m := *r.member
		for _, b := range []*[]byte{&m.turn, &m.step, &m.idx, &m.id, &m.name} {
			*b = bytes.Clone(*b)
		}
		r.member = &m
	}
	return r
}

// scanOutcome is everything a scan shows its caller.
type scanOutcome struct {
	Recs []Record
	Res  Result
	Err  string
}

// chunkReader returns its bytes in pieces of 1 to max bytes (rng-chosen),
// so raw lines straddle reads.
type chunkReader struct {
	b   []byte
	max int
	rng *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.b), 1+c.rng.IntN(c.max))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// scanBoth reads data both ways, stopping with an error at the stopAt-th
// visit (0: never), and fails t when they differ; it returns the compact
// path's outcome.
func scanBoth(t *testing.T, data []byte, enc Encoding, stopAt, readMax int) scanOutcome {
	t.Helper()
	run := func(lineByLine bool) scanOutcome {
		var o scanOutcome
		var r io.Reader = bytes.NewReader(data)
		if readMax > 0 {
			r = &chunkReader{b: data, max: readMax, rng: rand.New(rand.NewPCG(uint64(len(data)), uint64(readMax)))}
		}
		res, err := scan(r, enc, Options{MaxLineBytes: 1 << 12}, func(rec *Record) error {
			o.Recs = append(o.Recs, owned(*rec))
			if len(o.Recs) == stopAt {
				return errors.New("stop")
			}
			return nil
		}, lineByLine)
		res.Salvaged = bytes.Clone(res.Salvaged)
		o.Res = res
		if err != nil {
			o.Err = err.Error()
		}
		return o
	}
	fast, slow := run(false), run(true)
	if !sameOutcome(slow, fast) {
		d := cmp.Diff(slow, fast, recordCmp...)
		t.Fatalf("%v log (stop at %d, reads of up to %d): compact path differs (-line by line +compact):\n%s\ninput %q", enc, stopAt, readMax, d, data)
	}
	return fast
}

// sameOutcome is cmp.Equal with recordCmp, fast enough to run on every
// variant: the fields one by one, NaN equal to NaN.
func sameOutcome(a, b scanOutcome) bool {
	if len(a.Recs) != len(b.Recs) || a.Err != b.Err || !cmp.Equal(a.Res, b.Res) {
		return false
	}
	num := func(x, y float64) bool { return x == y || x != x && y != y }
	bs := func(x, y []byte) bool { return bytes.Equal(x, y) && (x == nil) == (y == nil) }
	for i := range a.Recs {
		x, y := &a.Recs[i], &b.Recs[i]
		if x.Type != y.Type || !num(x.Seq, y.Seq) || !num(x.Time, y.Time) || x.Foreign != y.Foreign || x.HasType != y.HasType ||
			x.NotObject != y.NotObject || !bs(x.Data, y.Data) || !bs(x.SurfaceOp, y.SurfaceOp) || !bs(x.SourceEventSeqs, y.SourceEventSeqs) ||
			!bs(x.Ignorable, y.Ignorable) || !bs(x.raw, y.raw) || (x.member == nil) != (y.member == nil) {
			return false
		}
		if m, n := x.member, y.member; m != nil && (m.chunkType != n.chunkType || !bs(m.turn, n.turn) || !bs(m.step, n.step) ||
			!bs(m.idx, n.idx) || !bs(m.id, n.id) || !bs(m.name, n.name)) {
			return false
		}
	}
	return true
}

// frameLog compresses header and body into frames, a new frame after every
// per-th line (per < 1: one frame for the body); stored (raw blocks, no
// checksum) rather than compressed when stored is set, since the
// compressor is too slow for a fuzzer.
func frameLog(body []byte, per int, stored bool) []byte {
	frames := [][]byte{[]byte(v0test.Header + "\n")}
	var cur []byte
	n := 0
	for len(body) > 0 {
		nl := bytes.IndexByte(body, '\n')
		if nl < 0 {
			nl = len(body) - 1
		}
		cur, body = append(cur, body[:nl+1]...), body[nl+1:]
		if n++; per > 0 && n%per == 0 {
			frames, cur = append(frames, cur), nil
		}
	}
	if len(cur) > 0 {
		frames = append(frames, cur)
	}
	if !stored {
		return v0test.Compress(frames)
	}
	var out []byte
	for _, f := range frames {
		out = storedFrame(out, f)
	}
	return out
}

// storedFrame appends a Zstandard frame holding plain in raw blocks (RFC
// 8878 §3.1.1: single segment, a 4-byte content size, no checksum).
func storedFrame(out, plain []byte) []byte {
	out = binary.LittleEndian.AppendUint32(out, 0xFD2FB528)
	out = append(out, 0xA0)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(plain)))
	for first := true; first || len(plain) > 0; first = false {
		n := min(len(plain), 128<<10)
		h := uint32(n) << 3 // raw block
		if n == len(plain) {
			h |= 1 // the last
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		out, plain = append(out, plain[:n]...), plain[n:]
	}
	return out
}

// variants are a log body and its damaged forms: each line in turn
// replaced by defects the compact path must leave to the line-by-line
// path (a seq gap, a bad byte, spaces, a torn end, null, a row off by one).
func variants(body string) []string {
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	out := []string{body, body + lines[0], body[:len(body)-1]}
	for i, l := range lines {
		for _, bad := range []string{
			strings.Replace(l, `"seq":`, `"seq":1`, 1),
			strings.Replace(l, `"seq0":`, `"seq0":1`, 1),
			strings.Replace(l, `":`, `": `, 1),
			strings.Replace(l, `"}`, "\x01\"}", 1),
			l[:len(l)/2],
			"null",
			l + l,
			`{"type":"turn/end","seq":` + fmt.Sprint(i+3) + `,"time":1,"data":{}}`,
		} {
			ls := append([]string{}, lines...)
			ls[i] = bad
			out = append(out, strings.Join(ls, "\n")+"\n")
		}
	}
	return out
}

func TestCompactScanMatchesLineByLine(t *testing.T) {
	for _, shape := range []string{"chunks", "packed", "tools"} {
		var body []byte
		for _, f := range v0test.Frames(shape, 2)[1:] {
			body = append(body, f...)
		}
		if shape == "chunks" {
			// Trim the chunk runs: the variants touch every line.
			ls := strings.Split(string(body), "\n")
			body = []byte(strings.Join(append(ls[:8], ls[len(ls)-12:]...), "\n"))
			ls = strings.Split(string(body), "\n")
			for i := range ls { // renumber: the trim left a seq gap
				if k := strings.Index(ls[i], `"seq":`); k >= 0 {
					e := k + len(`"seq":`) + strings.IndexByte(ls[i][k+len(`"seq":`):], ',')
					ls[i] = ls[i][:k] + `"seq":` + fmt.Sprint(i) + ls[i][e:]
				}
			}
			body = []byte(strings.Join(ls, "\n"))
		}
		whole := scanBoth(t, append([]byte(v0test.Header+"\n"), body...), Raw, 0, 0)
		if whole.Err != "" || whole.Res.Cut != -1 || whole.Res.Events == 0 {
			t.Fatalf("%s: the clean log does not read: %+v", shape, whole)
		}
		for vi, v := range variants(string(body)) {
			raw := append([]byte(v0test.Header+"\n"), v...)
			for _, stop := range []int{0, 5} {
				scanBoth(t, raw, Raw, stop, 0)
			}
			scanBoth(t, raw, Raw, 0, 1+vi%97)
			for _, per := range []int{0, 3} {
				z := frameLog([]byte(v), per, per == 3)
				scanBoth(t, z, Zstd, 0, 0)
				scanBoth(t, z, Zstd, 3, 0)
				scanBoth(t, z[:len(z)-1-vi%7], Zstd, 0, 0) // a torn last frame
			}
		}
	}
}

// FuzzCompactScan: on any log body, read raw (whole or in small reads) or
// compressed (a frame per few lines, whole or cut), the compact path agrees
// with the line-by-line path. The knob picks one of the four readings per
// execution, and bodies stay small: the fuzzer minimizes every new input by
// running it thousands of times (quadratically in its length), so an
// execution that read its body eight ways, on seeds of 10 KB, left no time
// to fuzz (7–9 executions in 60 s).
//
//	go test -run='^$' -fuzz=FuzzCompactScan -fuzztime=60s ./events/dsh/v0
func FuzzCompactScan(f *testing.F) {
	for k, shape := range []string{"chunks", "packed", "tools"} {
		var body []byte
		for _, fr := range v0test.Sized(shape, 1, 4, 2)[1:] {
			body = append(body, fr...)
		}
		for mode := range uint16(4) {
			f.Add(body, mode+uint16(k)<<2)
		}
	}
	f.Add([]byte(strings.Join(compactLines, "\n")+"\n"), uint16(3))
	f.Add([]byte(strings.Join(declinedLines, "\n")), uint16(9))
	f.Fuzz(func(t *testing.T, body []byte, knob uint16) {
		if len(body) > 1<<12 {
			return
		}
		arg := int(knob >> 2)
		switch knob % 4 {
		case 0:
			scanBoth(t, append([]byte(v0test.Header+"\n"), body...), Raw, arg%7, 0)
		case 1:
			scanBoth(t, append([]byte(v0test.Header+"\n"), body...), Raw, 0, 1+arg%61)
		case 2:
			scanBoth(t, frameLog(body, arg%4, true), Zstd, arg/4%5, 0)
		case 3:
			z := frameLog(body, arg%4, true)
			scanBoth(t, z[:len(z)-arg/4%(len(z)+1)], Zstd, 0, 0)
		}
	})
}
