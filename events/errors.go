package events

import (
	"errors"
	"fmt"
)

// Sentinel errors classifying what a reader found. Test with errors.Is; the
// concrete *Error carries the stream and position.
var (
	// ErrTornTail: a final fragment that was never fully written — a last
	// line without a newline that does not decode, or an undecodable line with
	// nothing valid after it. Only such a fragment may ever be discarded.
	ErrTornTail = errors.New("torn tail")
	// ErrCorrupt: an undecodable line followed by at least one valid one. The
	// damage is inside the committed region; it is reported, never skipped
	// silently. (For the Qwen ledger this is also what a sealed torn tail
	// looks like; the ledger reader drops it exactly as the reference does.)
	ErrCorrupt = errors.New("corrupt record")
	// ErrLineTooLong: a line longer than the reader's limit. Its bytes are
	// skipped without being buffered.
	ErrLineTooLong = errors.New("line exceeds size limit")
)

// Error is a positioned read or decode error.
type Error struct {
	Stream Stream
	Pos    Position
	Kind   error  // one of the sentinels above
	Detail string // what was wrong with the line, for humans
	Cause  error  // the codec's own error, if any
	// Unterminated is set by the framer for the final segment of a stream
	// that had no newline: the only bytes that can be a fragment never
	// written whole. A final line that ends in a newline but does not decode
	// was written whole (a splice, garbage) and may have held records.
	Unterminated bool
}

func (e *Error) Error() string {
	s := fmt.Sprintf("events: %s %s: %v", e.Stream, e.Pos, e.Kind)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap exposes both the classifying sentinel and the codec's cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}
