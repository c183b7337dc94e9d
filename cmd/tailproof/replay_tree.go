package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// chainTree follows the active chain of a transcript read a record at a
// time when the transcript is a tree rather than one line: each record
// either continues the chain (its parent is the last record) or continues
// it from an earlier record — a rewind, or a branch off any record read so
// far — and the active chain of every cut is the path from its last record
// back to the first (what qwen.LoadChain builds from the cut's leaf, ADR
// 0020). The folds over the chain (chainFolds) are marked at points of the
// active chain; at a rewind the nearest mark at or before the record the
// chain now continues from is restored, and the chain records after it are
// read again from their offsets and folded, so a rewind costs the records
// between that mark and the rewound-to record, not the chain (ADR 0035,
// 2026-12-01 night).
//
// A record whose parent is no record read so far (a gap) or who has none
// (a second root) starts the active chain again, as the index's walk back
// stops there; the gap is the chain's while its leaf descends from that
// record.
//
// Records that are never on a chain (artifact and managed-session records)
// are only counted. It keeps a few words per record (offset, line, parent,
// chain length and a uuid hash), never a record. A shape it cannot follow
// — a repeated uuid, a record that is the missing parent of an earlier one,
// two records on one line — is errNotStreamable.
type chainTree struct {
	folds  []chainFolds // each kept in step with the active chain; a mark holds one mark of each
	open   func() (io.ReadCloser, error)
	recs   []treeRec
	byHash map[uint64]int32 // uuid hash → record
	tip    int32            // the active chain's last record (-1: none yet)
	tipID  string           // its uuid
	depth  int32            // records on the active chain
	marks  []treeMark       // on the active chain, by depth; marks[0] is the empty chain
	every  int32            // the chain length between two marks at the tip
	root   int32            // the active chain's first record
	// gaps holds the records whose parent is no record read so far: each
	// starts an active chain that ends in that gap (qwen.Chain.Gaps);
	// missing holds those parents' hashes (one read later would join them).
	gaps    map[int32]qwen.Gap
	missing map[uint64]struct{}
	// side holds the uuid hashes of the records that are never on a chain
	// (artifact and managed-session records, qwen.IsConversationRecord);
	// line is the last record's line, of either kind.
	side map[uint64]struct{}
	line int32
}

// chainFolds is what a chainTree keeps in step with the active chain.
type chainFolds interface {
	addChain(e events.Event) error
	markChain() any
	restoreChain(m any)
}

type treeRec struct {
	off    int64
	line   int32
	parent int32 // -1: the root
	depth  int32 // the active chain's length with this record last
}

type treeMark struct {
	rec   int32 // the chain's last record at the mark (-1: empty)
	depth int32
	uuid  string
	m     []any // one per chainFolds
}

// markEvery is the chain length between the marks nearest the tip; older
// marks thin out geometrically (thin), so a chain of n records holds about
// 2·log2(n/markEvery) marks. A variable so that tests mark small sessions.
var markEvery int32 = 64

var treeSeed = maphash.MakeSeed()

// noFolds is a chainTree that only checks the shape (chainTree.shape).
type noFolds struct{}

func (noFolds) addChain(events.Event) error { return nil }
func (noFolds) markChain() any              { return nil }
func (noFolds) restoreChain(any)            {}

func newChainTree(folds chainFolds, open func() (io.ReadCloser, error)) *chainTree {
	t := &chainTree{open: open, byHash: map[uint64]int32{}, tip: -1, every: markEvery, root: -1,
		gaps: map[int32]qwen.Gap{}, missing: map[uint64]struct{}{}, side: map[uint64]struct{}{}}
	t.marks = []treeMark{{rec: -1}}
	t.follow(folds)
	return t
}

// follow keeps folds in step with the chain too; it must be called
// before the first record. It returns the slot of folds' marks (markWalk).
func (t *chainTree) follow(folds chainFolds) int {
	t.folds = append(t.folds, folds)
	t.marks[0].m = append(t.marks[0].m, folds.markChain())
	return len(t.folds) - 1
}

func (t *chainTree) markAll() []any {
	ms := make([]any, len(t.folds))
	for i, f := range t.folds {
		ms[i] = f.markChain()
	}
	return ms
}

// add folds record e, the transcript's next: after a rewind or branch the
// chain is first taken back to e's parent.
func (t *chainTree) add(e events.Event) error {
	if side, err := t.aside(e); side || err != nil {
		return err
	}
	rec, h, j, err := t.check(e)
	if err != nil {
		return err
	}
	switch {
	case j < 0 && t.tip >= 0:
		t.restart() // a second root, or a gap: the chain starts again here
	case j != t.tip:
		if err := t.rewind(j, rec.ParentUUID); err != nil {
			return err
		}
	}
	i := t.record(e, h, j)
	return t.step(i, e, rec)
}

// restart empties the active chain (its folds restored to the empty mark).
func (t *chainTree) restart() {
	clear(t.marks[1:])
	t.marks = t.marks[:1]
	for i, f := range t.folds {
		f.restoreChain(t.marks[0].m[i])
	}
	t.tip, t.tipID, t.depth = -1, "", 0
}

// chainGaps is the active chain's gap, as qwen.Chain.Gaps lists it.
func (t *chainTree) chainGaps() []qwen.Gap {
	if g, ok := t.gaps[t.root]; ok && t.root >= 0 {
		return []qwen.Gap{g}
	}
	return nil
}

// shape checks that record e, the transcript's next, is one add can
// follow, without folding anything.
func (t *chainTree) shape(e events.Event) error {
	if side, err := t.aside(e); side || err != nil {
		return err
	}
	rec, h, j, err := t.check(e)
	if err != nil {
		return err
	}
	t.tip, t.tipID = t.record(e, h, j), strings.Clone(rec.UUID)
	return nil
}

// aside notes e when it is a record that is never on a chain (side true):
// the index neither walks nor aggregates it, and a conversation record
// naming it as its parent has a gap.
func (t *chainTree) aside(e events.Event) (side bool, err error) {
	rec, ok := e.Body.(*qwen.Record)
	if !ok {
		return false, errNotStreamable
	}
	if int32(e.Pos.Line) <= t.line {
		return false, errNotStreamable // two records on one line: not re-readable by line
	}
	t.line = int32(e.Pos.Line)
	if qwen.IsConversationRecord(rec) {
		return false, nil
	}
	if rec.UUID != "" {
		h := maphash.String(treeSeed, rec.UUID)
		_, conv := t.byHash[h]
		if _, dup := t.side[h]; dup || conv {
			return true, errNotStreamable // a uuid shared with another record
		}
		t.side[h] = struct{}{}
	}
	return true, nil
}

// check is e's record, uuid hash and parent (-1: none).
func (t *chainTree) check(e events.Event) (*qwen.Record, uint64, int32, error) {
	rec, ok := e.Body.(*qwen.Record)
	if !ok || rec.UUID == "" {
		return nil, 0, 0, errNotStreamable
	}
	h := maphash.String(treeSeed, rec.UUID)
	_, side := t.side[h]
	if _, dup := t.byHash[h]; dup || side {
		return nil, 0, 0, errNotStreamable // a repeated uuid (or a hash collision): fragments
	}
	if _, late := t.missing[h]; late {
		return nil, 0, 0, errNotStreamable // the missing parent of an earlier record: the chain joins backwards
	}
	switch p := rec.ParentUUID; {
	case p == "":
		return rec, h, -1, nil // the first record, or a second root
	case p == t.tipID && t.tip >= 0:
		return rec, h, t.tip, nil
	default:
		ph := maphash.String(treeSeed, p)
		j, ok := t.byHash[ph]
		if !ok {
			// A gap: the parent is no record read so far.
			t.gaps[int32(len(t.recs))] = qwen.Gap{ChildUUID: strings.Clone(rec.UUID), MissingParentUUID: strings.Clone(p)}
			t.missing[ph] = struct{}{}
			return rec, h, -1, nil
		}
		return rec, h, j, nil
	}
}

// record notes e (uuid hash h) as the next record, a child of j.
func (t *chainTree) record(e events.Event, h uint64, j int32) int32 {
	i := int32(len(t.recs))
	t.byHash[h] = i
	depth := int32(1)
	if j >= 0 {
		depth = t.recs[j].depth + 1
	}
	t.recs = append(t.recs, treeRec{off: e.Pos.Offset, line: int32(e.Pos.Line), parent: j, depth: depth})
	if j < 0 {
		t.root = i
	}
	return i
}

// step folds record i (e), the active chain's next.
func (t *chainTree) step(i int32, e events.Event, rec *qwen.Record) error {
	for _, f := range t.folds {
		if err := f.addChain(e); err != nil {
			return err
		}
	}
	t.tip, t.tipID, t.depth = i, strings.Clone(rec.UUID), t.depth+1
	if t.every > 0 && t.depth%t.every == 0 {
		t.marks = append(t.marks, treeMark{rec: i, depth: t.depth, uuid: t.tipID, m: t.markAll()})
		t.thin()
	}
	return nil
}

// thin drops the marks no rewind will want first: a mark at distance d
// from the tip stays only when its depth is a multiple of every·2^k, k
// growing with log2(d / 2·every), so marks are dense near the tip and a
// rewind of d records re-reads O(d + every) of them.
func (t *chainTree) thin() {
	kept := t.marks[:1]
	for _, m := range t.marks[1:] {
		dist := (t.depth - m.depth) / (2 * t.every)
		k := 0
		if dist > 0 {
			k = bits.Len32(uint32(dist)) - 1
		}
		if m.depth%(t.every<<k) == 0 {
			kept = append(kept, m)
		}
	}
	clear(t.marks[len(kept):])
	t.marks = kept
}

// path is the chain from the first record to record j.
func (t *chainTree) path(j int32) []int32 {
	p := make([]int32, t.recs[j].depth)
	for k := j; k >= 0; k = t.recs[k].parent {
		p[t.recs[k].depth-1] = k
	}
	return p
}

// rewind takes the active chain back to record j (uuid id): the nearest
// mark on j's path is restored and the path's records after it are read
// again and folded.
func (t *chainTree) rewind(j int32, id string) error {
	path := t.path(j)
	mi := len(t.marks) - 1
	for ; mi > 0; mi-- {
		m := t.marks[mi]
		if int(m.depth) <= len(path) && path[m.depth-1] == m.rec {
			break
		}
	}
	clear(t.marks[mi+1:])
	t.marks = t.marks[:mi+1]
	m := t.marks[mi]
	t.root = path[0]
	for i, f := range t.folds {
		f.restoreChain(m.m[i])
	}
	t.tip, t.tipID, t.depth = m.rec, m.uuid, m.depth
	err := t.read(path[m.depth:], func(k int32, e events.Event) error {
		rec, ok := e.Body.(*qwen.Record)
		parent := t.tipID // the chain's root has none, or its gap's
		if t.recs[k].parent < 0 {
			parent = t.gaps[k].MissingParentUUID
		}
		if !ok || rec.ParentUUID != parent || t.byHash[maphash.String(treeSeed, rec.UUID)] != k {
			return fmt.Errorf("replay: record at %s: %w", e.Pos, qwen.ErrChanged)
		}
		return t.step(k, e, rec)
	})
	if err != nil {
		return err
	}
	if t.tipID != id {
		return errNotStreamable // the parent's hash matched another uuid
	}
	return nil
}

// rewalk feeds the active chain's first n records again (reconcile.Rewalk).
func (t *chainTree) rewalk(n int, yield func(events.Event) error) error {
	if t.tip < 0 || n <= 0 {
		return nil
	}
	p := t.path(t.tip)
	return t.read(p[:min(n, len(p))], func(_ int32, e events.Event) error { return yield(e) })
}

// markWalk offers the marks on the active chain to try, the deepest
// first, and feeds the chain records after the first it accepts, up to the
// chain's first n, to yield (reconcile.MarkWalk).
func (t *chainTree) markWalk(slot, n int, try func(m any) bool, yield func(events.Event) error) error {
	if t.tip < 0 {
		return nil
	}
	for mi := len(t.marks) - 1; mi >= 0; mi-- {
		m := t.marks[mi]
		if int(m.depth) > n || !try(m.m[slot]) {
			continue
		}
		p := t.path(t.tip)
		return t.read(p[m.depth:min(n, len(p))], func(_ int32, e events.Event) error { return yield(e) })
	}
	return nil
}

// read decodes records idx (in file order) from their offsets.
func (t *chainTree) read(idx []int32, fn func(k int32, e events.Event) error) error {
	if len(idx) == 0 {
		return nil
	}
	rc, err := t.open()
	if err != nil {
		return err
	}
	defer rc.Close()
	seeker, _ := rc.(io.Seeker)
	br := bufio.NewReaderSize(rc, 1<<16)
	var pos int64
	var line []byte
	for _, k := range idx {
		r := t.recs[k]
		switch {
		case r.off < pos:
			return fmt.Errorf("replay: records out of order: %w", qwen.ErrChanged)
		case seeker != nil && r.off-pos > int64(br.Buffered()):
			if _, err := seeker.Seek(r.off, io.SeekStart); err != nil {
				return err
			}
			br.Reset(rc)
		default:
			if _, err := br.Discard(int(r.off - pos)); err != nil {
				return fmt.Errorf("replay: record at offset %d: %w", r.off, errors.Join(err, qwen.ErrChanged))
			}
		}
		pos = r.off
		if line, err = readLine(br, line[:0], events.DefaultMaxLineBytes); err != nil {
			return err
		}
		pos += int64(len(line))
		e, err := decodeOne(line)
		if err != nil {
			return fmt.Errorf("replay: record at offset %d: %w", r.off, err)
		}
		e.Pos = events.Position{Line: int(r.line), Offset: r.off}
		if err := fn(k, e); err != nil {
			return err
		}
	}
	return nil
}

// readLine appends the next line (with its newline, if any) to buf,
// refusing one longer than max.
func readLine(br *bufio.Reader, buf []byte, max int) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > max+1 {
			return nil, fmt.Errorf("replay: a line of more than %d bytes: %w", max, qwen.ErrChanged)
		}
		switch {
		case err == nil, errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, errors.Join(err, qwen.ErrChanged)
		}
	}
}

// decodeOne is the first record of one transcript line.
func decodeOne(line []byte) (events.Event, error) {
	for e, err := range events.Decode(bytes.NewReader(line), qwen.Codec{}, events.Options{}) {
		if err != nil {
			return events.Event{}, errors.Join(err, qwen.ErrChanged)
		}
		return e, nil
	}
	return events.Event{}, qwen.ErrChanged
}
