package qwen

import (
	"fmt"
	"slices"

	"github.com/tailproof/tailproof/events"
)

// build is walkTranscriptUuidChain over the index: from the leaf's first
// fragment back through parents, then what Walk must emit. Shapes that
// need uuid strings (records sharing a hash, a gap, a cycle) read them
// back from the transcript, but for those already in need (read by
// groupsByReadBack).
func (l *loader) build(open Opener, need map[uint32]*Record) error {
	c, ix := l.c, l.ix
	// The walk marks the chain in a bit per record instead of listing it
	// (ADR 0039, amendment of 2026-12-02): a chain that Walk can stream —
	// file order, no fragments — needs only those bits; any other walks
	// back a second time to list its records.
	n, streaming, last := 0, true, uint32(0)
	onChain, gapK, cycleK := l.walkBack(func(k uint32) {
		if _, frag := ix.group(k); frag || n > 0 && k >= last {
			streaming = false
		}
		n, last = n+1, k
	})
	c.Len, c.Streaming = n, streaming
	if streaming {
		c.onChain = ix.objectBits(onChain, c.Objects)
	} else {
		chain := make([]uint32, 0, n)
		l.walkBack(func(k uint32) { chain = append(chain, k) })
		slices.Reverse(chain)
		l.wantList(chain)
	}

	// Uuid strings for the rare shapes: every record sharing a hash (to
	// tell fragments from collisions and compare their parents), the gap's
	// child, the cycle's record and the record whose parent closed it.
	if need == nil {
		need = map[uint32]*Record{}
	}
	ask := func(k uint32) {
		if _, ok := need[k]; !ok {
			need[k] = nil
		}
	}
	for _, g := range ix.groups {
		for _, k := range g {
			ask(k)
		}
	}
	if gapK >= 0 {
		ask(uint32(gapK))
	}
	if cycleK >= 0 {
		ask(uint32(cycleK))
		ask(last)
	}
	if len(need) == 0 {
		return nil
	}
	if err := l.readBack(open, need); err != nil {
		return err
	}
	type conflict struct {
		ord  uint32
		uuid string
	}
	var conflicts []conflict
	for _, g := range ix.groups {
		first := need[g[0]]
		for _, k := range g[1:] {
			r := need[k]
			switch {
			case r.UUID != first.UUID:
				c.collision(-1, first.UUID, r.UUID)
			case !sameParent(first, r):
				conflicts = append(conflicts, conflict{ix.ord(k), r.UUID})
			}
		}
	}
	slices.SortFunc(conflicts, func(a, b conflict) int { return int(a.ord) - int(b.ord) })
	for _, cf := range conflicts {
		c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagConflictingParent,
			Message: "Duplicate transcript record fragments disagree on parentUuid.", AffectsCompleteness: true,
			RecordIndex: int(cf.ord), RecordID: cf.uuid, Path: "parentUuid"})
	}
	if gapK >= 0 {
		r := need[uint32(gapK)]
		c.Gaps = append(c.Gaps, Gap{ChildUUID: r.UUID, MissingParentUUID: r.ParentUUID})
		c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagHistoryGap,
			Message: "The active transcript chain is missing a parent record.", AffectsCompleteness: true,
			RecordIndex: -1, RecordID: r.UUID})
	}
	if cycleK >= 0 {
		r, closer := need[uint32(cycleK)], need[last]
		if closer.ParentUUID != r.UUID {
			c.collision(-1, closer.ParentUUID, r.UUID)
		}
		c.Cycle = r.UUID
		c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagParentCycle,
			Message: "The active transcript chain contains a parent cycle.", AffectsCompleteness: true,
			RecordIndex: -1, RecordID: r.UUID})
	}
	return nil
}

// walkBack calls at with the chain's records (first fragments, leaf first)
// and returns them as a bit per conversation record, with the record whose
// parent is missing and the record met twice (-1 when none).
func (l *loader) walkBack(at func(k uint32)) (visited []uint64, gapK, cycleK int) {
	ix := l.ix
	visited = make([]uint64, (ix.n+63)/64)
	gapK, cycleK = -1, -1
	for k := ix.first(ix.n - 1); ; {
		if visited[k>>6]&(1<<(k&63)) != 0 {
			cycleK = int(k)
			break
		}
		visited[k>>6] |= 1 << (k & 63)
		at(k)
		parent, isLink := ix.parentOf(k)
		if !isLink { // the parent is record k-1's uuid
			k = ix.first(k - 1)
			continue
		}
		if parent <= emptyParent {
			break
		}
		next, ok := ix.lookup(parent)
		if !ok {
			gapK = int(k)
			break
		}
		k = next
	}
	return visited, gapK, cycleK
}

// wantList records what Walk emits for a chain (root first) it cannot
// stream: every fragment's object index with its chain position.
func (l *loader) wantList(chain []uint32) {
	c, ix := l.c, l.ix
	// Sized exactly: on a long chain a grown list would be copied whole.
	extra := 0
	for pos, k := range chain {
		if g, ok := ix.group(k); ok {
			if c.multi == nil {
				c.multi = map[uint32]uint32{}
			}
			c.multi[uint32(pos)] = uint32(len(g))
			extra += len(g) - 1
		}
	}
	c.want = make([]want, 0, len(chain)+extra)
	for pos, k := range chain {
		g, ok := ix.group(k)
		if !ok {
			g = []uint32{k}
		}
		for _, f := range g {
			c.want = append(c.want, want{ord: ix.ord(f), pos: uint32(pos)})
		}
	}
	slices.SortFunc(c.want, func(a, b want) int { return int(a.ord) - int(b.ord) })
}

func (c *Chain) collision(idx int, a, b string) {
	c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagHashCollision,
		Message:             fmt.Sprintf("uuids %q and %q share an index hash; the chain cannot be trusted.", a, b),
		AffectsCompleteness: true, RecordIndex: idx, RecordID: b})
}

// readBack reads the identity (uuid, parent) of the conversation records
// whose indexes are in need without a record yet.
func (l *loader) readBack(open Opener, need map[uint32]*Record) error {
	missing := 0
	for _, r := range need {
		if r == nil {
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	found := 0
	err := l.eachConversation(open, func(k uint32, pr *parsed) bool {
		if r, ok := need[k]; ok && r == nil {
			need[k] = identityOf(pr)
			found++
		}
		return found == missing
	})
	if err != nil {
		return err
	}
	if found < missing {
		return fmt.Errorf("qwen: %d indexed records not found: %w", missing-found, ErrChanged)
	}
	return nil
}

// groupsByReadBack gives a linear index the groups of records sharing a
// hash (dups, ascending; members records in all), read back from the
// transcript — the ranks that the linear index does not keep — and returns
// those records' identities for build (ADR 0039, amendment of 2026-12-02).
func (l *loader) groupsByReadBack(open Opener, dups []uint64, members int) (map[uint32]*Record, error) {
	ix := l.ix
	ix.groups = make([][]uint32, len(dups))
	need := make(map[uint32]*Record, members)
	err := l.eachConversation(open, func(k uint32, pr *parsed) bool {
		if g, ok := slices.BinarySearch(dups, uuidHash(pr.id.uuid)); ok {
			ix.groups[g] = append(ix.groups[g], k)
			ix.members = append(ix.members, member{k, uint32(g)})
			need[k] = identityOf(pr)
		}
		return len(need) == members
	})
	if err != nil {
		return nil, err
	}
	if len(need) < members {
		return nil, fmt.Errorf("qwen: %d indexed records not found: %w", members-len(need), ErrChanged)
	}
	return need, nil
}

func identityOf(pr *parsed) *Record {
	id := &pr.id
	return &Record{UUID: string(id.uuid), ParentUUID: string(id.parent), ParentNull: pr.parent == jNull}
}

// eachConversation reads the transcript's identities and calls f with each
// conversation record (k counting them as pass 1 did) until f says done.
func (l *loader) eachConversation(open Opener, f func(k uint32, pr *parsed) (done bool)) error {
	p := getParser(DecodeOptions{}, true)
	defer putParser(p)
	res := &p.res
	k := uint32(0)
	return readLines(open, l.c.opts.MaxLineBytes, nil, func(line events.Line) error {
		p.decodeLine(line.Bytes, res)
		for i := range res.recs {
			pr := &res.recs[i]
			if code, _ := identityProblem(pr); code != "" || !isConversationID(pr) {
				continue
			}
			done := f(k, pr)
			k++
			if done {
				return errStop
			}
		}
		return nil
	})
}
