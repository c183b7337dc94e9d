package apihistory

import (
	"hash/maphash"
	"strings"
)

// fpCounts is the fold's whole-history id counts in fingerprint mode
// (Options.Fingerprints, ADR 0030 amendment of 2026-12-01 evening): exact
// counts, keyed by the id's bytes, for the ids seen most recently, and for
// every older id only a 32-bit word — 30 bits of its fingerprint and the
// roles it held — in a flat table of its kind. An answer read from the recent counts is exact when
// the id's fingerprint is absent from the old table for the role asked
// about: an old occurrence of the id would have put it there. When it is
// present (the id did occur before, or another id shares the fingerprint)
// the answer is not known, and the fold says so (Fold.Exact); the caller
// then walks again with the exact fold. A fingerprint chooses where to look
// and proves absence; it never decides that two ids are equal, so it can
// cost a second walk but never change a verdict.
type fpCounts struct {
	hash  func(string) uint64
	limit int // recent ids kept exact before the oldest moves to the old table
	// recent holds the recent ids' entries by their hash (the fingerprint
	// hash), ids that share one chained through next: a lookup compares
	// 64-bit keys, never reads a key's bytes but the one id it checks, and
	// the hash is computed once per call — a string-keyed map cost two or
	// three cache misses a lookup, and the fold looks up a few ids a record.
	recent map[uint64]*recentID
	n      int         // entries in recent
	queue  []*recentID // recent's entries, oldest first (queue[head:])
	head   int
	slab   []recentID // where new entries are carved from (one allocation per slabSize ids)
	old    [3]fpSet   // see role
	pinned [3]string  // the last prompt's id and daemon id, the last attempt's daemon id
}

// recentID is one id's exact counts in every role since it entered the
// recent set (the fields of idCount, the tag count, promptHint and
// resultHint, and the daemon hint count).
type recentID struct {
	id             string    // the id
	h              uint64    // its hash, recent's key
	next           *recentID // the next entry of the same hash
	calls, results int32
	tags           int32
	prompts        int32
	daemons        int32
	outcomes       int32
	promptIdx      int
	outcomeIdx     int
	promptDaemon   string // the last prompt occurrence's daemonPromptId
	cancelled      bool
}

// The roles an id can hold. An old id is kept in the table of its kind —
// tool-call ids, prompt ids (a tag, a prompt hint), daemon ids (a daemon
// hint, a turn_result) — with one bit per role of that kind.
type role struct {
	table int    // index into fpCounts.old
	bit   uint32 // the role's bit in that table's words
}

var (
	roleTool    = role{0, 1 << 31}
	roleTag     = role{1, 1 << 31}
	rolePrompt  = role{1, 1 << 30}
	roleDaemon  = role{2, 1 << 31}
	roleOutcome = role{2, 1 << 30}
)

// defaultRecent is how many ids stay exact: a call and its response, a
// prompt and its turn_result are a few records apart, so their repeats are
// counted exactly; a few hundred KiB.
const defaultRecent = 4096

// slabSize is how many entries one allocation holds: a long session meets
// a new id every few records (a call id, a prompt id, a daemon id), and one
// allocation each was a tenth of the fold's cost. An entry is never reused
// (a retired one stays in its slab, which is garbage once all of its
// entries are retired), so a pointer at returned cannot change owner.
const slabSize = 128

var fpSeed = maphash.MakeSeed()

func newFPCounts(hash func(string) uint64, limit int) *fpCounts {
	if hash == nil {
		hash = func(s string) uint64 { return maphash.String(fpSeed, s) }
	}
	if limit <= 0 {
		limit = defaultRecent
	}
	limit = max(limit, 4)
	// Not presized: most sessions are far shorter than limit ids, and the
	// simulator starts a fold per scenario.
	return &fpCounts{hash: hash, limit: limit, recent: map[uint64]*recentID{}}
}

// at returns id's recent entry, creating it (the key cloned: a record's
// strings share one allocation) and moving the oldest id that is not
// pinned to the old table when the recent set is full.
func (c *fpCounts) at(id string) *recentID {
	h := c.hash(id)
	first := c.recent[h]
	for e := first; e != nil; e = e.next {
		if e.id == id {
			return e
		}
	}
	if len(c.slab) == 0 {
		c.slab = make([]recentID, slabSize)
	}
	e := &c.slab[0]
	c.slab = c.slab[1:]
	e.id, e.h, e.next = strings.Clone(id), h, first
	c.recent[h] = e
	c.n++
	c.queue = append(c.queue, e)
	for c.n > c.limit {
		c.retireOldest()
	}
	return e
}

// pin keeps id in the recent set while it is pinned (slot i): the last
// prompt's ids are the ones the cancelled-turn test asks about, however long
// its turn.
func (c *fpCounts) pin(i int, id string) {
	if c.pinned[i] != id {
		c.pinned[i] = strings.Clone(id)
	}
}

func (c *fpCounts) isPinned(id string) bool {
	return id == c.pinned[0] || id == c.pinned[1] || id == c.pinned[2]
}

// retireOldest moves the oldest recent id to the old table, or to the back
// of the queue when it is pinned (at most three are, and limit is at least
// four, so a call of at ends).
func (c *fpCounts) retireOldest() {
	e := c.queue[c.head]
	c.queue[c.head] = nil
	c.head++
	id := e.id
	if c.isPinned(id) {
		c.queue = append(c.queue, e)
	} else {
		var bits [3]uint32
		for _, r := range []struct {
			held bool
			role role
		}{
			{e.calls != 0 || e.results != 0, roleTool},
			{e.tags != 0, roleTag},
			{e.prompts != 0, rolePrompt},
			{e.daemons != 0, roleDaemon},
			{e.outcomes != 0, roleOutcome},
		} {
			if r.held {
				bits[r.role.table] |= r.role.bit
			}
		}
		if bits != [3]uint32{} {
			for t, b := range bits {
				if b != 0 {
					c.old[t].add(e.h, b)
				}
			}
		}
		c.unlink(e)
	}
	if c.head > len(c.queue)/2 {
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue, c.head = c.queue[:n], 0
	}
}

// sure reports whether id has no occurrence in role outside the recent set.
func (c *fpCounts) sure(id string, r role) bool {
	return !c.old[r.table].has(c.hash(id), r.bit)
}

// unlink takes e out of recent, and drops what it points to: a retired
// entry's slab may outlive it, and must not keep its strings or another
// entry alive.
func (c *fpCounts) unlink(e *recentID) {
	c.n--
	switch first := c.recent[e.h]; {
	case first == e && e.next == nil:
		delete(c.recent, e.h)
	case first == e:
		c.recent[e.h] = e.next
	default:
		for p := first; p != nil; p = p.next {
			if p.next == e {
				p.next = e.next
				break
			}
		}
	}
	e.id, e.promptDaemon, e.next = "", "", nil
}

func (c *fpCounts) peek(id string) recentID {
	for e := c.recent[c.hash(id)]; e != nil; e = e.next {
		if e.id == id {
			return *e
		}
	}
	return recentID{}
}

// clearHistory forgets the tool-call ids and prompt tags (a compression
// replaces the history; the settlement hints stay).
func (c *fpCounts) clearHistory() {
	for _, e := range c.queue[c.head:] {
		e.calls, e.results, e.tags = 0, 0, 0
	}
	c.old[roleTool.table].clearRoles(roleTool.bit)
	c.old[roleTag.table].clearRoles(roleTag.bit)
}

// fpSet is an open-addressing table of 32-bit words: a role bit or two in
// the top two bits and 30 bits of the fingerprint below (never zero, the
// empty mark). Linear probing, grown at 3/4. 30 bits make a false
// "present" about n/2^30 a question (3·10^-4 for the 350,000 ids of a kind
// in 1 GiB of short turns): a second walk, never a wrong answer.
type fpSet struct {
	words []uint32
	n     int
}

const fpRoleBits = uint32(3 << 30)

func fpWord(fp uint64) uint32 {
	w := uint32(fp>>34) &^ fpRoleBits // the top 30 bits
	if w == 0 {
		w = uint32(fp) &^ fpRoleBits // a weak (injected) hash lives in the low bits
	}
	if w == 0 {
		w = 1
	}
	return w
}

func (s *fpSet) slot(w uint32) int {
	// Fibonacci hashing spreads a weak (injected) fingerprint over the table.
	return int((uint64(w) * 0x9E3779B97F4A7C15) >> 32 & uint64(len(s.words)-1))
}

func (s *fpSet) has(fp uint64, bit uint32) bool {
	if s.n == 0 {
		return false
	}
	w := fpWord(fp)
	for i := s.slot(w); ; i = (i + 1) & (len(s.words) - 1) {
		switch x := s.words[i]; {
		case x == 0:
			return false
		case x&^fpRoleBits == w:
			return x&bit != 0
		}
	}
}

func (s *fpSet) add(fp uint64, bits uint32) {
	s.addWord(fpWord(fp), bits)
}

func (s *fpSet) addWord(w, bits uint32) {
	if (s.n+1)*4 > len(s.words)*3 {
		s.grow()
	}
	for i := s.slot(w); ; i = (i + 1) & (len(s.words) - 1) {
		switch x := s.words[i]; {
		case x == 0:
			s.words[i] = w | bits
			s.n++
			return
		case x&^fpRoleBits == w:
			s.words[i] = x | bits
			return
		}
	}
}

func (s *fpSet) grow() {
	old := s.words
	s.words = make([]uint32, max(1024, 2*len(old)))
	s.n = 0
	for _, x := range old {
		if x != 0 {
			s.addWord(x&^fpRoleBits, x&fpRoleBits)
		}
	}
}

func (s *fpSet) clearRoles(bits uint32) {
	for i, x := range s.words {
		if x != 0 {
			// The word stays (its fingerprint holds its place in the probe
			// sequence) with fewer roles.
			s.words[i] = x &^ bits
		}
	}
}
