package qwen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tailproof/tailproof/events"
)

// The transcript's line framer. events.Lines skips an over-long line and
// reads on, which is what the ledger and dsh readers want; a transcript
// reader must instead stop at it: a line is a record, and a "line" that
// never ends (a FIFO, /dev/zero) must not be read forever. This framer also
// reads straight into one buffer in which every line is contiguous, so a
// line longer than the read size is not copied a second time.

// frameSize is the buffer a framer starts with and reads into; a longer
// line grows it (up to the line limit) for the rest of the read. Buffers
// up to maxPooledFrame go back to the pool: a decision reads a small
// session several times, and a large one's long lines should not grow a
// buffer per pass.
const (
	frameSize      = 64 << 10
	maxPooledFrame = 1 << 20
)

var framePool = sync.Pool{New: func() any { b := make([]byte, frameSize); return &b }}

type framer struct {
	r     io.Reader
	buf   []byte
	start int // the next line's first byte
	scan  int // where the search for its newline resumes
	end   int // bytes read into buf
	err   error
	max   int
	off   int64 // file offset of buf[0]
	line  int
	ahead *ahead        // when reading ahead (frame_ahead.go)
	fuse  *recordParser // when fusing the newline search into the parse (fuse.go)
	// lastNL is the index in buf of the last '\n' read (-1: none after
	// the line that was current when it was computed; -2: not yet known,
	// after a fill). The fused read only tries lines that start before it.
	lastNL int
	tried  int // the line whose fused parse failed: the old path reads it
}

func newFramer(r io.Reader, max int) *framer {
	if max <= 0 {
		max = events.DefaultMaxLineBytes
	}
	return &framer{r: r, buf: *framePool.Get().(*[]byte), max: max, line: 1, lastNL: -2}
}

// release returns the buffer to the pool (unless a long line grew it
// past maxPooledFrame).
func (f *framer) release() {
	if f.ahead != nil {
		f.ahead.stop()
		f.ahead, f.buf = nil, nil
		return
	}
	if b := f.buf; len(b) >= frameSize && len(b) <= maxPooledFrame {
		framePool.Put(&b)
	}
	f.buf = nil
}

// next returns the next line (valid until the following call), io.EOF after
// the last, an *events.Error of kind events.ErrLineTooLong for a line over
// the limit, or the reader's error. The framer is done after any error.
func (f *framer) next() (events.Line, error) {
	if f.fuse != nil {
		f.fuse.fused = false
	}
	for {
		if f.fuse != nil && f.tried != f.line && f.start < f.end {
			if !f.ends() {
				f.scan = f.end // no newline after f.start: searched already
			} else if l, ok := f.fused(); ok {
				return l, nil
			} else {
				f.tried = f.line
			}
		}
		if i := bytes.IndexByte(f.buf[f.scan:f.end], '\n'); i >= 0 {
			nl := f.scan + i
			body := f.buf[f.start:nl]
			if len(body) > f.max {
				return events.Line{}, f.tooLong()
			}
			l := events.Line{Bytes: body, Pos: f.pos(), Terminated: true, Size: int64(len(body))}
			f.start, f.scan = nl+1, nl+1
			f.line++
			return l, nil
		}
		f.scan = f.end
		if f.end-f.start > f.max {
			return events.Line{}, f.tooLong()
		}
		if f.err != nil {
			if f.err != io.EOF {
				return events.Line{}, f.err
			}
			if f.end == f.start {
				return events.Line{}, io.EOF
			}
			body := f.buf[f.start:f.end]
			l := events.Line{Bytes: body, Pos: f.pos(), Size: int64(len(body))}
			f.start = f.end
			return l, nil
		}
		f.fill()
	}
}

func (f *framer) pos() events.Position {
	return events.Position{Line: f.line, Offset: f.off + int64(f.start)}
}

func (f *framer) tooLong() error {
	return &events.Error{Stream: events.StreamTranscript, Pos: f.pos(), Kind: events.ErrLineTooLong,
		Detail: fmt.Sprintf("line longer than %d bytes", f.max)}
}

// fill reads more bytes. When the buffer is full it first moves the
// partial line to the front, or grows the buffer when the line fills more
// than half of it.
func (f *framer) fill() {
	f.lastNL = -2
	if f.ahead != nil {
		f.fillAhead()
		return
	}
	if f.end == len(f.buf) && f.start > 0 && f.end-f.start < len(f.buf)/2 {
		n := copy(f.buf, f.buf[f.start:f.end])
		f.off += int64(f.start)
		f.scan -= f.start
		f.start, f.end = 0, n
	}
	if f.end == len(f.buf) {
		// Never more than the limit plus the byte that proves a line too
		// long (next refuses a longer partial line before filling).
		grown := make([]byte, min(2*len(f.buf), f.max+1))
		n := copy(grown, f.buf[f.start:f.end])
		f.release()
		f.off += int64(f.start)
		f.scan -= f.start
		f.buf, f.start, f.end = grown, 0, n
	}
	for range 100 { // as bufio: a reader may return 0, nil a few times
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		if err != nil {
			f.err = err
		}
		if n > 0 || err != nil {
			return
		}
	}
	f.err = io.ErrNoProgress
}

var errStop = errors.New("stop")

// readLines opens the transcript and feeds each physical line to f, which
// may return errStop to end the read early. With fuse set, the framer
// parses each line it can into fuse.res as it finds it (fuse.go); f then
// reads it with decodeFused.
func readLines(open Opener, max int, fuse *recordParser, f func(events.Line) error) error {
	rc, err := open()
	if err != nil {
		return fmt.Errorf("qwen: open transcript: %w", err)
	}
	defer rc.Close()
	fr := newFramer(rc, max)
	defer fr.release()
	fr.fuse = fuse
	if ra, ok := rc.(events.ReadAheader); ok {
		fr.startAhead(ra, aheadRoom, aheadChunk)
	}
	for {
		line, err := fr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *events.Error
			if errors.As(err, &pe) {
				return fmt.Errorf("qwen: %w", err)
			}
			return fmt.Errorf("qwen: read transcript: %w", err)
		}
		if err := f(line); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
}
