package events

import (
	"io"
	"iter"
	"strconv"
)

// Codec decodes the physical lines of one format into events.
//
// DecodeLine appends the events found on line to dst and returns it. A line
// may hold zero events (an empty line) or several (records glued `}{`). A
// line that does not decode returns an error; the reader then classifies it
// as a torn tail or as corruption from what follows. DecodeLine must not
// retain line.Bytes, and must never panic on any input.
type Codec interface {
	Name() string
	Stream() Stream
	DecodeLine(dst []Event, line Line) ([]Event, error)
}

// FusedCodec is a Codec that can also decode a line where it lies in the
// reader's buffer, finding where the line ends as it parses: Decode then
// skips the search for each line's newline, a second read of every byte
// (the fused line read; ADR 0044). Lines, positions, events and errors are
// the same bytes either way.
type FusedCodec interface {
	Codec
	// DecodeFused decodes the line that starts b, when that line is one
	// JSON object directly followed by '\n', holds no other '\n', is at
	// most max bytes and decodes without error: it appends the line's
	// events, which must be exactly those DecodeLine returns for
	// Line{Bytes: b[:n], Pos: pos, Terminated: true, Size: n}, and returns
	// n, the index of that '\n', and true. Otherwise it returns dst as it
	// was and false, and the line is framed and given to DecodeLine.
	DecodeFused(dst []Event, b []byte, pos Position, max int) ([]Event, int, bool)
}

// Options tune a Decode.
type Options struct {
	// MaxLineBytes bounds a line (<= 0: DefaultMaxLineBytes).
	MaxLineBytes int
	// RequireNewline treats a final segment without a newline as torn even
	// when it decodes (dsh's rule). Qwen's readers accept such a segment.
	RequireNewline bool
	// NoFuse frames every line before decoding it, even with a
	// FusedCodec (the fused read off: for tests and comparisons).
	NoFuse bool
}

// Decode streams the events of r through c. Errors are yielded in stream
// order as *Error values classified by ErrTornTail, ErrCorrupt or
// ErrLineTooLong (and any I/O error as is); decoding continues after a bad
// line, so the caller chooses the policy: stop, skip and count, or fail.
//
// Classification needs one look ahead: an undecodable line is reported as
// ErrCorrupt when a valid record follows it, and as ErrTornTail when nothing
// valid follows. Held-back errors are yielded before the valid event that
// proves them corrupt, so positions stay in order. A line that yields records
// and then fails (records glued `}{`, the last one torn) yields its records
// first; its own failure is then classified by what follows the line.
func Decode(r io.Reader, c Codec, opts Options) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		var (
			bad Classifier
			buf []Event
		)
		emit := func(es []*Error) bool {
			for _, e := range es {
				if !yield(Event{}, e) {
					return false
				}
			}
			return true
		}
		var fuse fuser
		stopped := false
		if fc, ok := c.(FusedCodec); ok && !opts.NoFuse {
			// A fused line decoded without error: the same steps as a
			// framed one below, whose error branch it never takes.
			fuse = func(b []byte, pos Position, max int) (int, bool, bool) {
				var n int
				var ok bool
				if buf, n, ok = fc.DecodeFused(buf[:0], b, pos, max); !ok {
					return 0, false, false
				}
				if len(buf) > 0 && !emit(bad.Valid()) {
					stopped = true
					return 0, false, true
				}
				for _, ev := range buf {
					if !yield(ev, nil) {
						stopped = true
						return 0, false, true
					}
				}
				return n, true, false
			}
		}
		for line, err := range lines(r, opts.MaxLineBytes, fuse) {
			if err != nil {
				if !emit(bad.End()) {
					return
				}
				yield(Event{}, err)
				return
			}
			if line.TooLong {
				if !yield(Event{}, &Error{Stream: c.Stream(), Pos: line.Pos, Kind: ErrLineTooLong,
					Detail: sizeDetail(line.Size), Unterminated: !line.Terminated}) {
					return
				}
				continue
			}
			if !line.Terminated && opts.RequireNewline {
				bad.Hold(&Error{Stream: c.Stream(), Pos: line.Pos, Detail: "final fragment has no newline", Unterminated: true})
				continue
			}
			var derr error
			buf, derr = c.DecodeLine(buf[:0], line)
			// Records decoded on this line prove every earlier bad line
			// corrupt — but not this line's own failure, which comes after
			// them (a glued pair whose second record is torn).
			if len(buf) > 0 && !emit(bad.Valid()) {
				return
			}
			for _, ev := range buf {
				if !yield(ev, nil) {
					return
				}
			}
			if derr != nil {
				detail := derr.Error()
				if !line.Terminated {
					detail = "final fragment has no newline: " + detail
				}
				bad.Hold(&Error{Stream: c.Stream(), Pos: line.Pos, Detail: detail, Cause: derr, Unterminated: !line.Terminated})
			}
		}
		if !stopped {
			emit(bad.End())
		}
	}
}

// Classifier is the one torn-versus-corrupt rule, for any reader of lines:
// an undecodable line is held until what follows it is known. A later line
// that yields a valid record proves every held line corrupt (something
// damaged the middle of the file); the end of the input proves them a torn
// tail (a crash cut the last write). Decode uses it; a format's own reader
// uses it to classify exactly as Decode does.
type Classifier struct{ pending []*Error }

// Hold records an undecodable line whose kind is not yet known.
func (c *Classifier) Hold(e *Error) { c.pending = append(c.pending, e) }

// Held is the number of lines held.
func (c *Classifier) Held() int { return len(c.pending) }

// Valid reports a valid record: it returns the held lines, in order,
// classified ErrCorrupt.
func (c *Classifier) Valid() []*Error { return c.settle(ErrCorrupt) }

// End reports the end of the input: it returns the held lines, in order,
// classified ErrTornTail.
func (c *Classifier) End() []*Error { return c.settle(ErrTornTail) }

func (c *Classifier) settle(kind error) []*Error {
	out := c.pending
	for _, e := range out {
		e.Kind = kind
	}
	c.pending = c.pending[:0:0]
	return out
}

func sizeDetail(n int64) string {
	return "line of " + strconv.FormatInt(n, 10) + " bytes"
}
