package qwen

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/events"
)

// frameAll frames data with the framer, reading through r's shape.
func frameAll(r io.Reader, max int) ([]events.Line, error) { return frameAhead(r, max, 0, 0) }

// frameAhead is frameAll reading ahead with room and chunk bytes per
// buffer (synchronously when chunk is 0).
func frameAhead(r io.Reader, max, room, chunk int) ([]events.Line, error) {
	f := newFramer(r, max)
	defer f.release()
	if chunk > 0 {
		f.startAhead(&syncAhead{r: r}, room, chunk)
	}
	var out []events.Line
	for {
		l, err := f.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		l.Bytes = append([]byte(nil), l.Bytes...)
		out = append(out, l)
	}
}

// checkFramer: up to the first over-long line the framer yields what
// events.Lines yields, and there it stops with ErrLineTooLong at that
// line's position — whatever the reads' sizes.
func checkFramer(t *testing.T, data []byte, max int) {
	t.Helper()
	var want []events.Line
	var tooLong *events.Line
	for l, err := range events.Lines(bytes.NewReader(data), max) {
		if err != nil {
			t.Fatal(err)
		}
		if l.TooLong {
			tooLong = &l
			break
		}
		l.Bytes = append([]byte(nil), l.Bytes...)
		want = append(want, l)
	}
	for _, c := range []struct {
		r           io.Reader
		room, chunk int
	}{
		{bytes.NewReader(data), 0, 0}, {iotest.OneByteReader(bytes.NewReader(data)), 0, 0},
		{iotest.HalfReader(bytes.NewReader(data)), 0, 0},
		// Reading ahead, with rooms shorter and longer than the lines.
		{bytes.NewReader(data), 1, 1}, {bytes.NewReader(data), 2, 5}, {bytes.NewReader(data), 7, 3},
		{iotest.HalfReader(bytes.NewReader(data)), 64, 16}, {bytes.NewReader(data), frameSize, frameSize},
	} {
		got, err := frameAhead(c.r, max, c.room, c.chunk)
		if d := cmp.Diff(want, got, lineText); d != "" {
			t.Fatalf("framer differs from events.Lines (-lines +framer):\n%s", d)
		}
		var pe *events.Error
		switch {
		case tooLong == nil && err != nil:
			t.Fatalf("framer error %v, want none", err)
		case tooLong != nil && (!errors.As(err, &pe) || !errors.Is(err, events.ErrLineTooLong) || pe.Pos != tooLong.Pos):
			t.Fatalf("framer error %v, want ErrLineTooLong at %s", err, tooLong.Pos)
		}
	}
}

func TestFramer(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 3*frameSize+7)
	for _, c := range []struct {
		data string
		max  int
	}{
		{"", 0}, {"\n", 0}, {"a", 0}, {"a\nb", 0}, {"a\nb\n", 0}, {"\n\n\r\n", 0},
		{"abc\nde\n", 3}, {"abcd\nde\n", 3}, {"ab\nabcd", 3}, {"ab\nabc", 3},
		{string(long) + "\nok\n", 0}, {"ok\n" + string(long), 0},
		{"ok\n" + string(long) + "\n", len(long)}, {"ok\n" + string(long) + "\n", len(long) - 1},
	} {
		checkFramer(t, []byte(c.data), c.max)
	}
}

func FuzzFramer(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte("{}\n{\"a\":1}\r\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		checkFramer(t, data, max%40)
	})
}

// lineText compares line bodies as strings (cmp walks a []byte per byte).
var lineText = cmp.Transformer("text", func(b []byte) string { return string(b) })

// zeros is an endless line that counts what is read of it.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) { clear(p); z.n += int64(len(p)); return len(p), nil }

// A transcript that never ends a line (/dev/zero, a FIFO that never writes
// a newline) stops every reader within the limit, with a positioned
// ErrLineTooLong.
func TestEndlessLineStops(t *testing.T) {
	const max = 1 << 20
	for name, read := range map[string]func(Opener) error{
		"LoadChain": func(o Opener) error { _, err := LoadChain(o, LoadOptions{MaxLineBytes: max}); return err },
		"Scan": func(o Opener) error {
			_, err := Scan(o, LoadOptions{MaxLineBytes: max}, func(int, events.Event) error { return nil }, nil)
			return err
		},
	} {
		z := &zeros{}
		err := read(func() (io.ReadCloser, error) { return io.NopCloser(z), nil })
		var pe *events.Error
		if !errors.Is(err, events.ErrLineTooLong) || !errors.As(err, &pe) || pe.Pos.Line != 1 || pe.Pos.Offset != 0 {
			t.Fatalf("%s: err = %v, want ErrLineTooLong at line 1", name, err)
		}
		if z.n > max+frameSize {
			t.Fatalf("%s read %d bytes for a limit of %d", name, z.n, max)
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := LoadChain(func() (io.ReadCloser, error) { return os.Open("/dev/zero") }, LoadOptions{MaxLineBytes: max})
		if !errors.Is(err, events.ErrLineTooLong) {
			t.Fatalf("/dev/zero: %v", err)
		}
	}
}

// A reader that makes no progress is an error, not a hang.
func TestFramerNoProgress(t *testing.T) {
	_, err := frameAll(iotest.ErrReader(nil), 0)
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v", err)
	}
}

// syncAhead is an events.ReadAheader that reads at StartRead: the
// framer's buffer handling without a goroutine (adapters/jsonl tests the
// one that reads in the background).
type syncAhead struct {
	r   io.Reader
	n   int
	err error
}

func (s *syncAhead) Read(p []byte) (int, error) { return s.r.Read(p) }
func (s *syncAhead) StartRead(p []byte)         { s.n, s.err = s.r.Read(p) }
func (s *syncAhead) WaitRead() (int, error)     { return s.n, s.err }
