package main

import (
	"math"
	"sort"

	"github.com/tailproof/tailproof/events"
)

// badLines are a streamed transcript's undecodable lines, as the whole
// file's index classified them (qwen.Chain.BadLines, file order). A cut
// holds those before its end; of them, a line before the cut's last record
// is corrupt (readable records follow it) and one after it is the cut's
// torn tail — what qwen.LoadChain reports on the cut's bytes, since a cut
// ends where a record starts and a line's bytes, hence its detail, do not
// depend on the cut.
type badLines struct {
	all []*events.Error
	met int // how many the stream has met
	// sum is the stream's own account of them (its decoder's reasons and
	// classification), for the replay's warning.
	sum badSummary
}

func newBadLines(all []*events.Error) *badLines { return &badLines{all: all} }

// meet checks that the stream's next undecodable line e is the index's
// next one and does not share a line with the record before it (line:
// that record's line, 0 when none).
func (b *badLines) meet(e *events.Error, line int) error {
	if b.met >= len(b.all) || b.all[b.met].Pos != e.Pos || e.Pos.Line == line {
		return errNotStreamable
	}
	b.met++
	b.sum.add(e)
	return nil
}

// done checks that the stream met every line the index found.
func (b *badLines) done() error {
	if b.met != len(b.all) {
		return errNotStreamable
	}
	return nil
}

// of is the BadLines of the cut whose last record starts at last and that
// ends at end (math.MaxInt64: the file's end).
func (b *badLines) of(last, end int64) []*events.Error {
	if len(b.all) == 0 {
		return nil
	}
	lo := sort.Search(len(b.all), func(i int) bool { return b.all[i].Pos.Offset > last })
	hi := sort.Search(len(b.all), func(i int) bool { return b.all[i].Pos.Offset >= end })
	if hi == 0 {
		return nil
	}
	out := make([]*events.Error, 0, hi)
	out = append(out, b.all[:lo]...)
	for _, e := range b.all[lo:hi] {
		if e.Kind != events.ErrTornTail {
			cp := *e
			cp.Kind = events.ErrTornTail
			e = &cp
		}
		out = append(out, e)
	}
	return out
}

// fileEnd is a cut end past every line.
const fileEnd = math.MaxInt64
