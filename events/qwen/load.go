package qwen

import (
	"fmt"

	"github.com/tailproof/tailproof/events"
)

// LoadChain is pass 1: it reads every line of the transcript once, validates
// each record, indexes uuid → parent compactly (no message bodies kept),
// picks the leaf and walks the chain. open is called once here (again when
// records sharing a uuid hash, a gap or a cycle need their strings) and
// once per Walk; its error is returned wrapped. A transcript whose valid
// records carry different session ids fails with ErrMixedSessionIDs; a line
// over LoadOptions.MaxLineBytes fails with events.ErrLineTooLong.
func LoadChain(open Opener, opts LoadOptions) (*Chain, error) {
	l := newLoader(opts, nil, nil)
	defer l.release()
	if err := readLines(open, opts.MaxLineBytes, fuseWith(l.p), l.line); err != nil {
		return nil, err
	}
	return l.finish(open)
}

// Scan is LoadChain and Walk in one streaming pass when it can be: while
// every conversation record read so far lies on one linear chain (each
// one's parent is the one before it) — the normal shape of a transcript —
// it hands each record to visit as it indexes it, decoded as Walk would.
// When that stops being certain (a branch, a gap, fragments sharing a
// uuid, a cycle) it finishes indexing without decoding, calls restart if
// visit saw anything, and walks the active chain from the start with a
// second pass. A new root record (parentUuid null or "") after a chain is
// a restart too, after which the pass goes on streaming from the root.
//
// The contract: once Scan returns without error, visit has seen since the
// last restart exactly the events LoadChain then Walk yield, in the same
// order, and the Chain is the one LoadChain returns (its Walk can be called
// again). An error of pass 1 (LoadChain's) returns no Chain; an error of
// the walk after a fallback (ErrHashCollision, ErrChanged) returns the
// Chain with it, as LoadChain then Walk would give both. An error from
// visit stops Scan and is returned as is, without a Chain when pass 1 was
// under way.
func Scan(open Opener, opts LoadOptions, visit func(i int, e events.Event) error, restart func()) (*Chain, error) {
	l := newLoader(opts, visit, restart)
	defer l.release()
	err := readLines(open, opts.MaxLineBytes, fuseWith(l.p), l.line)
	if l.visitErr != nil {
		return nil, l.visitErr
	}
	if err != nil {
		return nil, err
	}
	c, err := l.finish(open)
	if err != nil || c.Len == 0 || l.linear {
		return c, err
	}
	// The walk reads the Chain, not the index: released before the folds
	// grow (a branched transcript of small records: ~22 MiB; ADR 0039).
	l.release()
	if l.emitted > 0 && restart != nil {
		restart()
	}
	return c, c.Walk(open, visit)
}

// loader is pass 1's state.
type loader struct {
	c       *Chain
	p       *recordParser
	ix      *index
	pending []*events.Error // bad lines not yet known torn or corrupt

	// Scan's: linear while every conversation record from kStart on
	// follows the one before it; emitted of them went to visit.
	visit    func(int, events.Event) error
	restart  func()
	linear   bool
	kStart   uint32
	emitted  int
	visitErr error
}

func newLoader(opts LoadOptions, visit func(int, events.Event) error, restart func()) *loader {
	l := &loader{c: &Chain{opts: opts}, ix: getIndex(), visit: visit, restart: restart, linear: visit != nil}
	// Scan decodes records (as Walk: without payloads unless asked) while
	// it streams; LoadChain only reads identities.
	if l.linear {
		l.p = getParser(opts.Decode, false)
		l.ix.keepLinear()
	} else {
		l.p = getParser(DecodeOptions{}, true)
	}
	return l
}

func (l *loader) release() {
	if l.ix == nil {
		return
	}
	putParser(l.p)
	putIndex(l.ix)
	l.p, l.ix = nil, nil
}

// line reads one physical line's objects.
func (l *loader) line(line events.Line) error {
	c, p := l.c, l.p
	res := &p.res
	p.decodeFused(line.Bytes)
	if len(res.recs) > 0 {
		for _, e := range l.pending {
			if e.Kind == nil {
				e.Kind = events.ErrCorrupt
			}
		}
		c.BadLines = append(c.BadLines, l.pending...)
		l.pending = l.pending[:0]
	}
	if !res.complete {
		detail := res.detail
		if !line.Terminated {
			detail = "final fragment has no newline: " + detail
		}
		l.pending = append(l.pending, &events.Error{Stream: events.StreamTranscript, Pos: line.Pos, Detail: detail,
			Cause: ErrNotRecord})
	}
	for i := range res.recs {
		if err := l.object(&res.recs[i], line.Pos); err != nil {
			return err
		}
	}
	return nil
}

// object validates one object as validateTranscriptRecord does, indexes it
// when it is a conversation record, and (Scan) hands it to visit while the
// chain is linear.
func (l *loader) object(pr *parsed, linePos events.Position) error {
	c, p := l.c, l.p
	idx := c.Objects
	c.Objects++
	id := &pr.id
	if idx == 0 {
		c.HasFirst = true
		p.setStr(&c.FirstSessionID, id.session)
		p.setStr(&c.FirstCwd, id.cwd)
		p.setStr(&c.FirstTS, id.ts)
		p.flush()
	}
	pos := events.Position{Line: linePos.Line, Offset: linePos.Offset + int64(pr.start)}
	if code, msg := identityProblem(pr); code != "" {
		c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: code, Message: msg, AffectsCompleteness: true,
			RecordIndex: idx, RecordID: string(id.uuid), Pos: pos})
		return nil
	}
	c.Diagnostics = recordDiagnostics(pr, idx, pos, c.Diagnostics)
	c.Records++
	if c.Records == 1 {
		c.SessionID = c.FirstSessionID
		if string(id.session) != c.SessionID {
			c.SessionID = string(id.session)
		}
	} else if string(id.session) != c.SessionID {
		return fmt.Errorf("qwen: %s: %w: %q and %q", pos, ErrMixedSessionIDs, c.SessionID, id.session)
	}
	if !isConversationID(pr) {
		return nil
	}
	if int64(idx) >= 1<<32-1 { // int64: an int is 32 bits on 386
		return fmt.Errorf("qwen: %s: more than 2^32 records", pos)
	}
	k := l.ix.n
	follows := l.ix.add(id.uuid, id.parent, pr.parent == jNull, uint32(idx))
	if !l.linear {
		return nil
	}
	switch {
	case follows:
	case len(id.parent) == 0: // a root (null or ""): a chain starts here
		if l.emitted > 0 && l.restart != nil {
			l.restart()
		}
		l.kStart, l.emitted = k, 0
	default:
		// A branch or a gap: which records the chain holds is known only
		// at the end. Stop decoding; Scan walks the chain afterwards.
		// The index stays linear (ADR 0039, amendment of 2026-12-02).
		l.linear = false
		p.light = true
		return nil
	}
	if err := l.visit(l.emitted, Envelope(pr.rec, pos)); err != nil {
		l.visitErr = err
		return errStop
	}
	l.emitted++
	return nil
}

// finish completes pass 1: bad lines at the end are a torn tail, the leaf
// is the last conversation record, and the chain is walked back from it.
func (l *loader) finish(open Opener) (*Chain, error) {
	c, ix := l.c, l.ix
	for _, e := range l.pending {
		if e.Kind == nil {
			e.Kind = events.ErrTornTail
		}
	}
	c.BadLines = append(c.BadLines, l.pending...)
	l.pending = nil
	if ix.n == 0 {
		if c.Records > 0 {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagArtifactOnly,
				Message: "The input contains no conversation records.", RecordIndex: -1})
		}
		l.linear = false
		return c, nil
	}
	c.LeafUUID = string(ix.prev)
	var need map[uint32]*Record
	if ix.linear {
		// Scan's index. After a branch or a gap the walk-back needs the
		// record each link names, found while the hashes are in record
		// order.
		ix.resolveLinks()
		if dups, members := ix.linearDups(); len(dups) > 0 {
			// Records share a uuid hash (fragments, a cycle, a
			// collision): the chain is walked back, with the groups
			// that the linear index has no ranks for read back.
			l.linear = false
			var err error
			if need, err = l.groupsByReadBack(open, dups, members); err != nil {
				return nil, err
			}
		}
	}
	if l.linear {
		// Every record from kStart on follows the one before it, no uuid
		// repeats, and the leaf is the last: the chain is what visit saw.
		c.Len, c.Streaming = l.emitted, true
		c.onChain = make([]uint64, (c.Objects+63)/64)
		for k := l.kStart; k < ix.n; k++ {
			o := ix.ord(k)
			c.onChain[o>>6] |= 1 << (o & 63)
		}
		return c, nil
	}
	if !ix.linear {
		ix.finish()
	}
	return c, l.build(open, need)
}
