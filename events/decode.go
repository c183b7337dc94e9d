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

// Options tune a Decode.
type Options struct {
	// MaxLineBytes bounds a line (<= 0: DefaultMaxLineBytes).
	MaxLineBytes int
	// RequireNewline treats a final segment without a newline as torn even
	// when it decodes (dsh's rule). Qwen's readers accept such a segment.
	RequireNewline bool
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
			pending []*Error // undecodable lines not yet classified
			buf     []Event
		)
		flush := func(kind error) bool {
			for _, e := range pending {
				e.Kind = kind
				if !yield(Event{}, e) {
					return false
				}
			}
			pending = pending[:0]
			return true
		}
		for line, err := range Lines(r, opts.MaxLineBytes) {
			if err != nil {
				if !flush(ErrTornTail) {
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
				pending = append(pending, &Error{Stream: c.Stream(), Pos: line.Pos, Detail: "final fragment has no newline", Unterminated: true})
				continue
			}
			var derr error
			buf, derr = c.DecodeLine(buf[:0], line)
			// Records decoded on this line prove every earlier bad line
			// corrupt — but not this line's own failure, which comes after
			// them (a glued pair whose second record is torn).
			if len(buf) > 0 && !flush(ErrCorrupt) {
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
				pending = append(pending, &Error{Stream: c.Stream(), Pos: line.Pos, Detail: detail, Cause: derr, Unterminated: !line.Terminated})
			}
		}
		flush(ErrTornTail)
	}
}

func sizeDetail(n int64) string {
	return "line of " + strconv.FormatInt(n, 10) + " bytes"
}
