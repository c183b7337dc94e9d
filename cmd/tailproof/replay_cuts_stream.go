package main

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/timeline"
)

// errNotStreamable: this session's crash table needs the whole files in
// memory (replay's general path); nothing was printed.
var errNotStreamable = errors.New("replay: not a clean linear session")

// streamCrashRows decides every crash point of a Qwen session without
// holding its transcript: the ledger is read whole (a few hundred bytes a
// prompt), the transcript indexed once (qwen.LoadChain, memory of a few
// bytes a record) and, when that index shows one clean linear chain, decoded
// a record at a time, merged with the ledger in crash order (timeline.Merge's
// order) and folded by the one pass (tailproof.Cuts). A prompt whose fold
// cannot be forked has the transcript read again up to that point. The rows
// are those the whole-file path prints. errNotStreamable (and nothing
// decided) when the session is not such a session: missing or empty files,
// undecodable lines, a chain that branches, gaps or rewinds.
func streamCrashRows(ctx context.Context, st adapters.Store, sid string, f replayFlags, progress func(total, done int)) ([]crashRow, []string, *replayPageOf, error) {
	s, total, err := openStream(ctx, st, sid, tailproof.Options{DryRun: true, Reference: f.reference, NoTrace: true}, f.now, false, true)
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.close()
	if f.html != "" {
		s.page = timeline.New()
	}
	total++ // the crash before any event
	rows := make([]crashRow, 0, total)
	for n := 0; ; n++ {
		if progress != nil {
			progress(total, n+1)
		}
		row, more, err := s.step(n)
		if err != nil {
			return nil, nil, nil, err
		}
		rows = append(rows, row)
		if !more {
			break
		}
	}
	if len(rows) != total {
		return nil, nil, nil, errNotStreamable // the transcript changed since it was indexed
	}
	var page *replayPageOf
	if s.page != nil {
		// The decision over the whole files, with its trace (the pass keeps
		// none): a dry-run reconcile of them, as the whole-file path's.
		out, _ := newOutcome(total - 1)
		if out.Error == "" {
			opts := tailproof.Options{Now: func() int64 { return clockOr(f.now, s.last) }, DryRun: true, Reference: f.reference}
			res, err := tailproof.Reconcile(ctx, st, sid, opts)
			out = outcomeOf(res, err, f.reference, out)
		}
		page = &replayPageOf{events: total - 1, items: s.page.Items(), out: out, crashAt: -1}
	}
	return rows, s.warnings(f), page, nil
}

// openStream opens a session for a streamed replay: the ledger read whole
// and decoded, the transcript indexed (and, with decodes, decoded once
// without keeping anything, so that stepping, which prints as it goes,
// cannot meet a line it cannot show), then opened for the one pass. total
// is the number of merged events. errNotStreamable when the session needs
// the whole-file replay.
func openStream(ctx context.Context, st adapters.Store, sid string, opts tailproof.Options, now int64, decodes, tree bool) (s *streamState, total int, err error) {
	var warn *badSummary
	rc, err := st.OpenLedger(ctx, sid)
	if err != nil {
		return nil, 0, errNotStreamable
	}
	ldata, err := readLines(rc, events.StreamLedger, 0)
	rc.Close()
	if err != nil || len(ldata) == 0 {
		return nil, 0, errNotStreamable
	}
	lsrc, err := timeline.Decode(ldata, ledger.Codec{}, events.Options{})
	if err != nil || len(lsrc.Bad) > 0 || len(lsrc.Events) == 0 {
		return nil, 0, errNotStreamable
	}
	recs := make([]ledger.Record, len(lsrc.Events))
	for i, e := range lsrc.Events {
		r, ok := asLedger(e)
		if !ok {
			return nil, 0, errNotStreamable
		}
		recs[i] = r
	}
	open := func() (io.ReadCloser, error) { return st.OpenTranscript(ctx, sid) }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil || chain.Len == 0 || chain.Records != chain.Objects || !tree && (!chain.Streaming || chain.Len != chain.Records) ||
		!tree && (len(chain.Gaps) > 0 || len(chain.BadLines) > 0) || chain.Cycle != "" || skipsRecords(chain) {
		return nil, 0, errNotStreamable
	}
	bad := newBadLines(chain.BadLines)
	if decodes {
		pre := newBadLines(chain.BadLines)
		if n, err := linearRecords(open, tree, pre); err != nil || n != chain.Records {
			return nil, 0, errNotStreamable
		}
		warn = &pre.sum
	}
	cuts, err := tailproof.NewCuts(opts)
	if err != nil {
		return nil, 0, errNotStreamable
	}
	tpl := *chain
	tpl.Gaps, tpl.Diagnostics, tpl.BadLines = nil, nil, nil
	trc, err := open()
	if err != nil {
		return nil, 0, errNotStreamable
	}
	next, stop := iter.Pull2(events.Decode(trc, qwen.Codec{}, events.Options{}))
	s = &streamState{ctx: ctx, cuts: cuts, tpl: tpl, ldata: ldata, lsrc: lsrc, recs: recs, next: next, reference: opts.Reference, now: now, bad: bad,
		lkey: timeline.NoKey, tkey: timeline.NoKey, close: func() { stop(); trc.Close() }}
	s.warn = warn
	if warn == nil {
		s.warn = &bad.sum // complete once the pass has read the transcript through
	}
	s.tree = newChainTree(cutsFolds{cuts}, open)
	if chain.Streaming && chain.Len == chain.Records {
		s.tree.every = 0 // one linear chain: no rewind will want a mark
	}
	s.rewalk = s.tree.rewalk
	cuts.SetRewalk(s.tree.rewalk)
	cuts.SetMarkWalk(func(n int, try func(m *tailproof.ChainMark) bool, yield func(events.Event) error) error {
		return s.tree.markWalk(0, n, func(m any) bool { return try(m.(*tailproof.ChainMark)) }, yield)
	})
	return s, len(recs) + chain.Records, nil
}

// linearRecords decodes the transcript through, keeping nothing, and
// counts its records: an error for an undecodable line or a record that
// does not continue one linear chain (tree: one chainTree can follow).
func linearRecords(open func() (io.ReadCloser, error), tree bool, bad *badLines) (int, error) {
	rc, err := open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var lin linearCheck
	var shape *chainTree
	if tree {
		shape = newChainTree(noFolds{}, nil)
	}
	n, line := 0, 0
	for e, err := range events.Decode(rc, qwen.Codec{}, events.Options{}) {
		var ee *events.Error
		if errors.As(err, &ee) && tree {
			if err := bad.meet(ee, line); err != nil {
				return n, err
			}
			continue
		}
		if err != nil {
			return n, err
		}
		line = e.Pos.Line
		if shape != nil {
			if err := shape.shape(e); err != nil {
				return n, err
			}
		} else if !lin.add(e, n) {
			return n, errNotStreamable
		}
		n++
	}
	if tree {
		return n, bad.done()
	}
	return n, nil
}

// skipsRecords: the index skipped or merged records (an invalid record, a
// record of unknown type, fragments, a hash collision), which the streamed
// pass does not follow.
func skipsRecords(c *qwen.Chain) bool {
	for _, d := range c.Diagnostics {
		switch d.Code {
		case qwen.DiagConflictingParent, qwen.DiagHashCollision, qwen.DiagInvalidRecord:
			return true
		case qwen.DiagUnknownRecordOrPart:
			if d.Path == "" {
				return true
			}
		}
	}
	return false
}

// linearCheck tells whether each next record continues one linear chain:
// a conversation record, the first a root, each next the child of the one
// before, no uuid twice.
type linearCheck struct {
	prev string
	seen uuidSet
}

func (l *linearCheck) add(e events.Event, i int) bool {
	rec, ok := e.Body.(*qwen.Record)
	if !ok || !qwen.IsConversationRecord(rec) || rec.UUID == "" || rec.ParentUUID != l.prev || (i > 0 && l.prev == "") {
		return false
	}
	if !l.seen.add(rec.UUID) {
		return false
	}
	l.prev = strings.Clone(rec.UUID)
	return true
}

// uuidSet holds 64-bit hashes of uuids, never the strings: a decoded
// record's strings share one allocation, so a key aliasing one kept the
// whole record alive (ADR 0030). A collision reads as a repeated uuid, which
// only ever sends a replay to its slower, exact path; the seed is the
// process's, so every check of one file agrees.
type uuidSet map[uint64]struct{}

var uuidSeed = maphash.MakeSeed()

// add adds uuid; false when it (or a colliding one) was there.
func (u *uuidSet) add(uuid string) bool {
	if *u == nil {
		*u = uuidSet{}
	}
	h := maphash.String(uuidSeed, uuid)
	if _, dup := (*u)[h]; dup {
		return false
	}
	(*u)[h] = struct{}{}
	return true
}

// streamState is one streaming crash table's position.
type streamState struct {
	ctx       context.Context
	cuts      *tailproof.Cuts
	tpl       qwen.Chain
	ldata     []byte
	lsrc      timeline.Source
	recs      []ledger.Record
	next      func() (events.Event, error, bool)
	reference bool
	now       int64

	li, ti     int   // ledger events taken; transcript records taken
	lkey, tkey int64 // the last sort key of each stream (timeline.Carry)
	peek       *events.Event
	done       bool // the transcript is exhausted
	last       int64
	tree       *chainTree // the active chain
	bad        *badLines
	warn       *badSummary        // the transcript's undecodable lines, for the warning
	page       *timeline.Timeline // every event taken, for --html (nil without)
	line       int                // the last transcript record's line
	lastOff    int64              // and its offset
	lsize      int64
	rewalk     func(n int, yield func(events.Event) error) error
	close      func()
}

// step decides crash point n after taking merged event n (none for 0);
// more is false after the last event.
func (s *streamState) step(n int) (row crashRow, more bool, err error) {
	if n == 0 {
		row = crashRowAt(0, nil)
	} else {
		e, ok, err := s.take()
		if err != nil {
			return row, false, err
		}
		if !ok {
			return row, false, errNotStreamable
		}
		row = crashRowAt(n, &e)
		if e.Time.OK && e.Time.Ms > s.last {
			s.last = e.Time.Ms
		}
	}
	if err := s.fill(); err != nil { // where the cut ends (decide)
		return row, false, err
	}
	res, ok, derr := s.decide()
	if ok {
		row.fill(res, derr)
	} else {
		out, mem := newOutcome(n)
		if out.Error == "" {
			out = decideQwenCut(s.ctx, mem, [2][]byte{s.ldata[:s.lsize], nil}, [2]bool{true, true}, s.reference, clockOr(s.now, s.last), out)
		}
		row.fillOutcome(out)
	}
	return row, s.li < len(s.recs) || s.peek != nil, nil
}

// fill peeks at the next transcript record.
func (s *streamState) fill() error {
	if s.peek != nil || s.done {
		return nil
	}
	e, err, ok := s.next()
	for ok && err != nil {
		var ee *events.Error
		if !errors.As(err, &ee) {
			return fmt.Errorf("read transcript: %w", err)
		}
		if err := s.bad.meet(ee, s.line); err != nil {
			return err // an undecodable line the index did not see
		}
		e, err, ok = s.next()
	}
	if !ok {
		s.done = true
		return s.bad.done()
	}
	if s.ti == 0 && e.Pos.Offset != 0 {
		return errNotStreamable // bytes before the first record stay with the empty cut
	}
	s.peek = &e
	return nil
}

// take is the next merged event (timeline.Merge's order), folded.
func (s *streamState) take() (events.Event, bool, error) {
	if err := s.fill(); err != nil {
		return events.Event{}, false, err
	}
	takeLedger := s.li < len(s.recs)
	if takeLedger && s.peek != nil {
		le := s.lsrc.Events[s.li]
		takeLedger = timeline.LedgerFirst(timeline.Carry(le, s.lkey), le.Kind, timeline.Carry(*s.peek, s.tkey))
	}
	if takeLedger {
		e := s.lsrc.Events[s.li]
		s.lkey = timeline.Carry(e, s.lkey)
		s.li++
		end := int64(len(s.ldata))
		if s.li < len(s.lsrc.Events) {
			end = s.lsrc.Events[s.li].Pos.Offset
		}
		s.cuts.AddLedger(s.recs[s.li-1], int(end-s.lsize))
		s.lsize = end
		s.onPage(e)
		return e, true, nil
	}
	if s.peek == nil {
		return events.Event{}, false, nil
	}
	e := *s.peek
	s.peek = nil
	s.tkey = timeline.Carry(e, s.tkey)
	if err := s.tree.add(e); err != nil {
		return events.Event{}, false, errors.Join(errNotStreamable, err)
	}
	s.ti, s.line, s.lastOff = s.ti+1, e.Pos.Line, e.Pos.Offset
	s.onPage(e)
	return e, true, nil
}

func (s *streamState) decide() (tailproof.Result, bool, error) {
	if s.ti == 0 {
		return tailproof.Result{}, false, nil
	}
	chain := s.tpl
	chain.Len, chain.Records, chain.Objects, chain.LeafUUID = int(s.tree.depth), s.ti, s.ti, s.tree.tipID
	chain.Gaps = s.tree.chainGaps()
	end := int64(fileEnd)
	if s.peek != nil {
		end = s.peek.Pos.Offset
	}
	chain.BadLines = s.bad.of(s.lastOff, end)
	return s.cuts.Decide(s.ctx, &chain, clockOr(s.now, s.last))
}

// cutsFolds keeps the one pass in step with a chainTree.
type cutsFolds struct{ cuts *tailproof.Cuts }

func (c cutsFolds) addChain(e events.Event) error { return c.cuts.AddChainEvent(e) }
func (c cutsFolds) markChain() any                { return c.cuts.Mark() }
func (c cutsFolds) restoreChain(m any)            { c.cuts.Restore(m.(*tailproof.ChainMark)) }

// warnings are replayWarnings' for the streamed session (its ledger decoded
// without a bad line).
func (s *streamState) warnings(f replayFlags) []string {
	paths, roles := warningNames(f, false)
	return append(noLedgerWarning(f, false), s.warn.warnings(paths[1], roles[1], s.tpl.Records)...)
}

// onPage adds e, the event just taken, to the --html page's timeline.
func (s *streamState) onPage(e events.Event) {
	if s.page != nil {
		s.page.Add(e)
	}
}
