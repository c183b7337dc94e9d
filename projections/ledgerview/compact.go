package ledgerview

import (
	"hash/maphash"
	"strings"
)

// The compact view (ADR 0039): exact ids and facts only for the prompts
// that can still matter — the last Window prompts by first appearance and
// every prompt that is open when it leaves that window — and, for the
// others, one 64-bit fingerprint each and two aggregates. A retired prompt
// is settled and its facts are final, so its whole contribution to the
// predecessor queries of a later prompt is a running maximum; a record that
// names a retired prompt again would change it, and the view cannot tell
// such a record from one of a new prompt whose fingerprint it shares, so
// either makes the view unproven (Exact false) and the caller folds the
// ledger again with an exact view. A fingerprint proves only absence (an id
// never retired cannot be in the set); it never decides that two ids are
// equal, so it can cost a second read of the ledger, never an answer.

// DefaultWindow is the number of most recent prompts a compact view keeps
// exactly (besides the open ones): far more than any live session has in
// flight, small enough to cost well under a MiB.
const DefaultWindow = 4096

// maxFrozen bounds the open prompts kept past the window: each late
// retirement updates every one of them, so a ledger with more stops being
// folded compactly (unproven) rather than quadratically.
const maxFrozen = 4096

// agg is what the predecessor queries need of a set of prompts: the latest
// terminal `at` among them, and the prompt whose latest record is a
// completed terminal with the latest `at` (the first in admission order on a
// tie) with its last admission's `at`.
type agg struct {
	term          float64
	hasTerm, hasC bool
	cAdmit, cAt   float64
	cOrder        int
}

func (a *agg) add(order int, f *fact) {
	if f.flags&hasTerminal != 0 && (!a.hasTerm || f.maxTermAt > a.term) {
		a.term, a.hasTerm = f.maxTermAt, true
	}
	if f.flags&admitted == 0 || f.flags&latestCompleted == 0 {
		return
	}
	if !a.hasC || f.latestAt > a.cAt || f.latestAt == a.cAt && order < a.cOrder {
		a.cAdmit, a.cAt, a.cOrder, a.hasC = f.admitAt, f.latestAt, order, true
	}
}

// frozen is an open prompt that left the window: its fact, still exact, and
// the aggregate of the retired prompts that first appeared before it.
type frozen struct {
	f    fact
	pred agg
}

// compact is the state only a compact view has.
type compact struct {
	window   int
	live     map[string]int  // id -> order, for the window and the frozen prompts (cloned keys)
	winIDs   []string        // ids of the window's orders, parallel to View.facts
	frozen   map[int]*frozen // made at the first (a session of fewer prompts never needs it)
	old      agg             // every retired prompt
	gone     fpSet
	sealed   bool // gone was dropped: every id not live may be a retired one
	unproven bool
}

// NewCompact returns an empty compact view keeping window prompts exactly
// (window <= 0: DefaultWindow). Its answers equal New's whenever Exact
// reports true after the last record and the last query.
func NewCompact(window int) *View {
	if window <= 0 {
		window = DefaultWindow
	}
	v := New()
	v.c = &compact{window: window, live: map[string]int{}, gone: newFPSet(nil)}
	return v
}

// Exact reports whether every answer the view gave and gives is the exact
// view's: always for New; for a compact view, unless a record or a query
// named an id whose fingerprint is among the retired prompts', or too many
// open prompts left the window.
func (v *View) Exact() bool { return v.c == nil || !v.c.unproven }

// find is id's order; retired reports (compact only) that its fingerprint
// is a retired prompt's, so the view cannot answer for it.
func (v *View) find(id string) (order int, ok, retired bool) {
	if v.c == nil {
		order, ok = v.index.find(id)
		return order, ok, false
	}
	if order, ok = v.c.live[id]; ok {
		return order, true, false
	}
	return 0, false, v.c.sealed || v.c.gone.has(id)
}

// Seal drops a compact view's fingerprints of retired prompts (8 bytes a
// prompt) once the caller has asked every question about a particular
// prompt it will ask: afterwards a record or a query naming a prompt that is
// neither open nor among the last Window makes the view unproven, since it
// can no longer tell a new id from a retired one. Queries about the open
// prompts, and the ones that name no prompt, stay exact. A no-op on New's.
func (v *View) Seal() {
	if v.c != nil {
		v.c.sealed, v.c.gone = true, fpSet{}
	}
}

// firstPrompts is the first capacity of a view's per-prompt slices: most
// ledgers the simulator folds name a handful of prompts, and growing from
// nil cost an allocation at each of the first three.
const firstPrompts = 4

// intern gives a new prompt its order and its fact.
func (v *View) intern(id string) int {
	if v.facts == nil {
		v.facts = make([]fact, 0, firstPrompts)
	}
	if v.c == nil {
		order := v.index.add(id)
		v.facts = append(v.facts, fact{})
		return order
	}
	c := v.c
	order := v.frontier + len(v.facts)
	id = strings.Clone(id)
	c.live[id] = order
	if c.winIDs == nil {
		c.winIDs = make([]string, 0, firstPrompts)
	}
	c.winIDs = append(c.winIDs, id)
	v.facts = append(v.facts, fact{})
	for len(v.facts) > c.window {
		v.retireFront()
	}
	return order
}

// factOf is the fact of a prompt that find found.
func (v *View) factOf(order int) *fact {
	if order >= v.frontier {
		return &v.facts[order-v.frontier]
	}
	return &v.c.frozen[order].f
}

// retireFront moves the window's oldest prompt out: frozen when open,
// otherwise retired.
func (v *View) retireFront() {
	c, order, f, id := v.c, v.frontier, v.facts[0], v.c.winIDs[0]
	v.facts[0], c.winIDs[0] = fact{}, ""
	v.facts, c.winIDs = v.facts[1:], c.winIDs[1:]
	v.frontier++
	if f.flags&latestInFlight != 0 {
		if len(c.frozen) >= maxFrozen {
			c.unproven = true
		}
		if c.frozen == nil {
			c.frozen = map[int]*frozen{}
		}
		c.frozen[order] = &frozen{f: f, pred: c.old}
		return
	}
	// Every frozen prompt is older than this one: no update.
	delete(c.live, id)
	c.old.add(order, &f)
	c.forget(id)
}

// closed is called when a prompt's record is a terminal: a frozen prompt
// retires now, adding itself to the aggregates of the prompts after it.
func (v *View) closed(id string, order int) {
	if v.c == nil || order >= v.frontier {
		return
	}
	c := v.c
	z := c.frozen[order]
	delete(c.frozen, order)
	delete(c.live, id)
	c.old.add(order, &z.f)
	for o, later := range c.frozen {
		if o > order {
			later.pred.add(order, &z.f)
		}
	}
	c.forget(id)
}

// forget leaves a retired id's fingerprint (a sealed view has none: it
// treats every id that is not live as retired).
func (c *compact) forget(id string) {
	if !c.sealed {
		c.gone.add(id)
	}
}

// predecessors aggregates the prompts that first appeared before order.
func (v *View) predecessors(order int) agg {
	var a agg
	if v.c != nil {
		a = v.c.old
		if order < v.frontier {
			a = v.c.frozen[order].pred
		}
		for o, z := range v.c.frozen {
			if o < order {
				a.add(o, &z.f)
			}
		}
	}
	for i := range v.facts {
		o := v.frontier + i
		if o >= order {
			break
		}
		a.add(o, &v.facts[i])
	}
	return a
}

// fpSet is a set of 64-bit fingerprints, open addressing (0 is empty).
type fpSet struct {
	hash  func(string) uint64
	slots []uint64
	n     int
}

var fpSeed = maphash.MakeSeed()

func newFPSet(hash func(string) uint64) fpSet {
	if hash == nil {
		hash = func(s string) uint64 { return maphash.String(fpSeed, s) }
	}
	return fpSet{hash: hash}
}

func (s *fpSet) fp(id string) uint64 {
	if h := s.hash(id); h != 0 {
		return h
	}
	return 1
}

func (s *fpSet) has(id string) bool {
	if s.n == 0 {
		return false
	}
	h, mask := s.fp(id), uint64(len(s.slots)-1)
	for i := h & mask; s.slots[i] != 0; i = (i + 1) & mask {
		if s.slots[i] == h {
			return true
		}
	}
	return false
}

func (s *fpSet) add(id string) {
	if 4*(s.n+1) > 3*len(s.slots) {
		old := s.slots
		s.slots = make([]uint64, max(64, 2*len(old)))
		for _, h := range old {
			if h != 0 {
				s.place(h)
			}
		}
	}
	if h := s.fp(id); !s.placeNew(h) {
		return
	}
	s.n++
}

func (s *fpSet) place(h uint64) { s.placeNew(h) }

// placeNew inserts h unless present and reports whether it did.
func (s *fpSet) placeNew(h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for ; s.slots[i] != 0; i = (i + 1) & mask {
		if s.slots[i] == h {
			return false
		}
	}
	s.slots[i] = h
	return true
}
