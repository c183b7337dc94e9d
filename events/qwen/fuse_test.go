package qwen

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/events"
)

// lineOut is what the loader sees of one line: the framed line and what
// its parse yielded.
type lineOut struct {
	Line     events.Line
	Complete bool
	Detail   string
	Recs     []recOut
}

type recOut struct {
	Start, End int
	Kinds      [8]jkind
	ID         [7]string
	TimeMs     int64
	TimeOK     bool
	Rec        *Record
}

// frameParse reads data as the loader does, fused or not, through one of
// the framer's reading shapes: bufSize > 0 starts the synchronous framer
// with a buffer of that size, chunk > 0 reads ahead.
func frameParse(data []byte, max, bufSize, room, chunk int, light, fuse bool) ([]lineOut, error) {
	var r io.Reader = bytes.NewReader(data)
	if bufSize == 1 {
		r = iotest.OneByteReader(r)
	}
	f := newFramer(r, max)
	defer f.release()
	switch {
	case chunk > 0:
		f.startAhead(&syncAhead{r: r}, room, chunk)
	case bufSize > 0:
		f.buf = make([]byte, bufSize)
	}
	p := getParser(DecodeOptions{KeepPayloads: true}, light)
	defer putParser(p)
	if fuse {
		f.fuse = p
	}
	var out []lineOut
	for {
		l, err := f.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		p.decodeFused(l.Bytes)
		o := lineOut{Line: l, Complete: p.res.complete, Detail: p.res.detail}
		o.Line.Bytes = append([]byte(nil), l.Bytes...)
		for _, pr := range p.res.recs {
			id := pr.id
			o.Recs = append(o.Recs, recOut{Start: pr.start, End: pr.end,
				Kinds: [8]jkind{pr.uuid, pr.parent, pr.session, pr.typ, pr.timestamp, pr.subtype, pr.message, pr.parts},
				ID: [7]string{string(id.uuid), string(id.parent), string(id.session), string(id.typ),
					string(id.subtype), string(id.cwd), string(id.ts)},
				TimeMs: id.timeMs, TimeOK: id.timeOK, Rec: pr.rec})
		}
		out = append(out, o)
	}
}

// allFields compares unexported fields too, and goal contexts by value
// (GoalContext.Equal is false for two nils).
var allFields = cmp.Options{cmp.Exporter(func(reflect.Type) bool { return true }),
	cmp.Comparer(func(a, b *GoalContext) bool { return reflect.DeepEqual(a, b) })}

// checkFused: the fused read yields the same lines, parses and error as
// the framer then decodeLine, record by record, at every buffer shape.
func checkFused(t *testing.T, data []byte, max int) {
	t.Helper()
	for _, c := range []struct{ buf, room, chunk int }{
		{0, 0, 0}, {1, 0, 0}, {16, 0, 0}, {100, 0, 0},
		{0, 1, 1}, {0, 2, 5}, {0, 7, 3}, {0, 64, 16}, {0, 300, 64},
	} {
		for _, light := range []bool{false, true} {
			want, werr := frameParse(data, max, c.buf, c.room, c.chunk, light, false)
			got, gerr := frameParse(data, max, c.buf, c.room, c.chunk, light, true)
			if d := cmp.Diff(want, got, lineText, allFields); d != "" {
				t.Fatalf("shape %+v light %v: fused read differs (-old +fused):\n%s", c, light, d)
			}
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("shape %+v light %v: error %v, want %v", c, light, gerr, werr)
			}
		}
	}
}

const fuseRec = `{"uuid":"a","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:00.000Z","type":"user","message":{"role":"user","parts":[{"text":"hi \"x\"\\n"}]}}`

var fuseCases = []string{
	"", "\n", "\n\n", fuseRec, fuseRec + "\n", fuseRec + "\n" + fuseRec + "\n",
	fuseRec + "\r\n" + fuseRec + "\r\n",  // CRLF
	fuseRec + "\n\n \n" + fuseRec + "\n", // blank lines
	fuseRec + "\n" + fuseRec[:40],        // torn tail
	fuseRec + "\n" + fuseRec[:40] + "\n", // torn line, terminated
	fuseRec + fuseRec + "\n",             // two objects on one line
	fuseRec + " " + fuseRec + "\n", fuseRec + " \n", fuseRec + "x\n", "x" + fuseRec + "\n",
	strings.Replace(fuseRec, `,"type"`, ",\n\"type\"", 1) + "\n", // a newline in whitespace
	strings.Replace(fuseRec, `,"type"`, ",\r\"type\"", 1) + "\n", // a CR in whitespace
	strings.Replace(fuseRec, `{"text"`, "{ \n\t\"text\"", 1) + "\n",
	strings.Replace(fuseRec, `hi`, "h\ni", 1) + "\n",  // a raw newline in a string
	`{"a":[1,` + "\n" + `2]}` + "\n" + fuseRec + "\n", // in a skipped value
	`{}` + "\n" + `{"a":1}` + "\n" + `[1]` + "\n" + `{` + "\n" + `}` + "\n",
	"\ufeff" + fuseRec + "\n", " " + fuseRec + "\n",
}

func TestFusedMatchesOld(t *testing.T) {
	for _, c := range fuseCases {
		for _, max := range []int{0, 10, len(fuseRec) - 1, len(fuseRec), len(fuseRec) + 1} {
			checkFused(t, []byte(c), max)
		}
	}
	for _, s := range fuzzSeeds {
		checkFused(t, []byte(s+"\n"+s+"\r\n"+s), 0)
	}
}

// The fused path does take the common line (else the test above compares
// the old path with itself).
func TestFusedTakesCompactLines(t *testing.T) {
	data := []byte(fuseRec + "\n" + fuseRec + "\n")
	f := newFramer(bytes.NewReader(data), 0)
	defer f.release()
	p := getParser(DecodeOptions{}, false)
	defer putParser(p)
	f.fuse = p
	for range 2 {
		if _, err := f.next(); err != nil {
			t.Fatal(err)
		}
		if !p.fused {
			t.Fatal("a compact line was not parsed where it lies")
		}
	}
}

func FuzzFusedFraming(f *testing.F) {
	for _, c := range fuseCases {
		f.Add([]byte(c), 0)
	}
	for _, s := range fuzzSeeds[:6] {
		f.Add([]byte(s+"\n"+s+"\n"), len(s))
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 0 {
			max = -max
		}
		checkFused(t, data, max%600)
	})
}

func TestLastNewline(t *testing.T) {
	b := bytes.Repeat([]byte("x"), 10000)
	for _, c := range []struct {
		nl           []int
		lo, hi, want int
	}{
		{nil, 0, 10000, -1}, {[]int{5}, 0, 10000, 5}, {[]int{5}, 6, 10000, -1}, {[]int{5}, 5, 6, 5},
		{[]int{5, 9990}, 0, 10000, 9990}, {[]int{5, 9990}, 0, 9990, 5}, {[]int{100, 5000}, 0, 9000, 5000},
		{[]int{0}, 0, 0, -1},
	} {
		d := bytes.Clone(b)
		for _, i := range c.nl {
			d[i] = '\n'
		}
		if got := lastNewline(d, c.lo, c.hi); got != c.want {
			t.Errorf("lastNewline(%v, %d, %d) = %d, want %d", c.nl, c.lo, c.hi, got, c.want)
		}
	}
}
