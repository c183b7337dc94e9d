package dshlog

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

// V1Scanner is RecoverV1's scan of a v1 log (dsh's scanLog,
// deepseek-dsh.md §2.2) fed one physical line at a time, with its turn
// enclosure folded as the events are preserved, and Decide is RecoverV1's
// decision over the lines so far. RecoverV1 feeds it a whole file; a reader
// that follows a log line by line (replay's crash points, cmd/tailproof)
// asks at any line boundary what RecoverV1 would decide had the file ended
// there — by the same code, without reading the log again.
type V1Scanner struct {
	maxLine   int
	keep      bool // keep the preserved events (RecoverV1's Recovery.Events)
	header    dsh.Header
	sawHeader bool
	fatal     error // a header recovery refuses: nothing after it is read
	hole      *scanHole
	endAfter  bool // a turn/end at or after the hole
	events    []dsh.Record
	arena     []byte // the kept events' data: an allocation per few KiB, not per line
	n         int
	fold      turns.Enclosure
	committed int64 // end of the last preserved line (or of the header)
}

// NewV1Scanner is a scanner of lines split with limit maxLine (<= 0:
// events.DefaultMaxLineBytes) that keeps no event: its memory is the open
// turn's, whatever the log's length.
func NewV1Scanner(maxLine int) *V1Scanner { return &V1Scanner{maxLine: maxLine} }

// scanHole is the first line the scan could not preserve.
type scanHole struct {
	pos    events.Position
	index  int
	detail string
}

// Line takes the next physical line (as events.Lines yields it); false
// when the scan has stopped (a refused header, or the unterminated final
// fragment, which is never a line) and later lines change nothing.
func (s *V1Scanner) Line(line events.Line) bool {
	if s.fatal != nil || !line.Terminated {
		return false // the torn fragment: never a line
	}
	end := line.Pos.Offset + line.Size + 1
	if !s.sawHeader {
		s.sawHeader = true
		if line.TooLong {
			s.fatal = fmt.Errorf("%s: %w: header line exceeds %d bytes", line.Pos, adapters.ErrCorruptLog, maxLineOrDefault(s.maxLine))
			return false
		}
		h, err := dsh.ParseHeader(line.Bytes)
		if errors.Is(err, dsh.ErrNotJSON) {
			s.fatal = fmt.Errorf("%s: %w: header line is not valid JSON", line.Pos, adapters.ErrCorruptLog)
		} else if err != nil {
			s.fatal = fmt.Errorf("%s: %w: first line is not a session header", line.Pos, adapters.ErrCorruptLog)
		}
		s.header, s.committed = h, end
		return s.fatal == nil
	}
	if s.hole != nil {
		if !s.endAfter && !line.TooLong && isTurnEnd(line.Bytes) {
			s.endAfter = true
		}
		return true
	}
	i := s.n
	var rec dsh.Record
	var perr error
	if line.TooLong {
		perr = fmt.Errorf("line of %d bytes exceeds %d", line.Size, maxLineOrDefault(s.maxLine))
	} else if s.keep {
		rec, s.arena, perr = dsh.ParseRecordAppend(s.arena, line.Bytes)
	} else {
		rec, s.arena, perr = dsh.ParseRecordAppend(s.arena[:0], line.Bytes)
	}
	switch {
	case perr != nil:
		s.hole = &scanHole{pos: line.Pos, index: i, detail: fmt.Sprintf("unparsable committed event (event %d): %v", i, perr)}
		s.endAfter = !line.TooLong && isTurnEnd(line.Bytes)
	case rec.Seq != int64(i):
		s.hole = &scanHole{pos: line.Pos, index: i, detail: fmt.Sprintf("seq gap in committed region (expected %d, got %d)", i, rec.Seq)}
		s.endAfter = rec.Type == dsh.TypeTurnEnd
	default:
		if s.keep {
			s.events = append(s.events, rec)
		}
		_ = s.fold.Apply(rec) // its error is the fold's, which Decide reports
		s.n++
		s.committed = end
	}
	return true
}

// V1Decision is what RecoverV1 would do to the lines scanned so far.
type V1Decision struct {
	Header dsh.Header
	// Events is the number of preserved events; Committed where the last
	// preserved line (or the header) ends.
	Events    int
	Committed int64
	// Repair is the cut (TruncatedBytes; Evidence is left empty: nothing
	// was written) and the closers of the open turn.
	Repair adapters.Repair
	// Fold is the turn enclosure of the preserved events (read only).
	Fold *turns.Enclosure
}

// Decide is RecoverV1's decision, or its refusal, over the lines scanned so
// far had the file named path ended after size bytes (the unterminated
// fragment included): the errors are RecoverV1's, word for word.
func (s *V1Scanner) Decide(path string, size int64) (V1Decision, error) {
	if err := s.scanErr(); err != nil {
		return V1Decision{}, fmt.Errorf("dshlog: %s: %w", path, err)
	}
	if s.header.Version != dsh.Version {
		return V1Decision{}, fmt.Errorf("dshlog: %s: %w %s for %q (only v1 is supported)", path,
			adapters.ErrUnsupportedVersion, strconv.FormatFloat(s.header.Version, 'f', -1, 64), s.header.ID)
	}
	closers, err := s.fold.Closers()
	if err != nil {
		return V1Decision{}, fmt.Errorf("dshlog: %s: cannot close the open turn: %w: %w", path, adapters.ErrCorruptLog, err)
	}
	d := V1Decision{Header: s.header, Events: s.n, Committed: s.committed, Fold: &s.fold}
	if s.committed < size {
		d.Repair.TruncatedBytes = size - s.committed
	}
	if len(closers) > 0 {
		d.Repair.Closers = closers
	}
	return d, nil
}

// scanErr is why the scan refuses the log: a bad header, no header line,
// or a hole before a turn/end (corruption inside the committed region).
func (s *V1Scanner) scanErr() error {
	switch {
	case s.fatal != nil:
		return s.fatal
	case !s.sawHeader:
		return fmt.Errorf("%w: empty or header-less session log", adapters.ErrCorruptLog)
	case s.hole != nil && s.endAfter:
		return fmt.Errorf("%s: %w: %s", s.hole.pos, adapters.ErrCorruptLog, s.hole.detail)
	}
	return nil
}
