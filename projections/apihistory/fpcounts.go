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
	// ring holds the recent ids' entries in queue order, oldest first:
	// ring[(head+i) % len(ring)] for i < n. It grows by doubling up to
	// limit+4 entries (limit, the one being added, and room to rotate a
	// pinned one) and is then reused in place: no allocation per id.
	ring []recentID
	head int
	n    int
	// table finds an id's entry: open addressing with linear probing over
	// words that pack the top 32 bits of the id's hash (the fingerprint
	// hash) above its ring index + 1 (0 is empty), at most half full. A
	// lookup compares 32 bits of hash before it reads an entry, and the
	// entry's id bytes before it answers. A string-keyed map, then a map of
	// hashes to chained entries carved from slabs, each cost several cache
	// misses and an allocation per id (ADR 0042; ADR 0050).
	table  []uint64
	old    [3]fpSet  // see role
	pinned [3]string // the last prompt's id and daemon id, the last attempt's daemon id
}

// recentID is one id's exact counts in every role since it entered the
// recent set (the fields of idCount, the tag count, promptHint and
// resultHint, and the daemon hint count).
type recentID struct {
	id             string // the id
	h              uint64 // its hash
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

// firstRing is the ring's first size: most sessions are far shorter than
// limit ids, and the simulator starts a fold per scenario. Of seed 1's
// fingerprint folds (`simulate --seed 1 --runs 2000`) none held more than 15
// ids and most at most 4: a first ring of 64 entries (and its 128-word
// table) was a tenth of the simulator's allocated bytes; a long session
// pays three more doublings on its way to limit+4.
const firstRing = 8

var fpSeed = maphash.MakeSeed()

func newFPCounts(hash func(string) uint64, limit int) *fpCounts {
	if hash == nil {
		hash = func(s string) uint64 { return maphash.String(fpSeed, s) }
	}
	if limit <= 0 {
		limit = defaultRecent
	}
	limit = max(limit, 4)
	return &fpCounts{hash: hash, limit: limit}
}

// tableWord packs an entry's hash tag and ring index.
func tableWord(h uint64, idx int) uint64 { return h&^0xFFFFFFFF | uint64(idx+1) }

// lookup returns the table slot of id (hash h) and whether it holds id;
// when it does not, the slot is the empty one where id would go.
func (c *fpCounts) lookup(id string, h uint64) (int, bool) {
	if len(c.table) == 0 {
		return 0, false
	}
	mask := len(c.table) - 1
	tag := h &^ 0xFFFFFFFF
	for i := int(h>>7) & mask; ; i = (i + 1) & mask {
		w := c.table[i]
		if w == 0 {
			return i, false
		}
		if w&^0xFFFFFFFF == tag {
			if e := &c.ring[int(uint32(w))-1]; e.h == h && e.id == id {
				return i, true
			}
		}
	}
}

// at returns id's recent entry, creating it (the key cloned: a record's
// strings share one allocation) and moving the oldest id that is not
// pinned to the old table when the recent set is full. The pointer is
// valid until the next call of at.
func (c *fpCounts) at(id string) *recentID {
	h := c.hash(id)
	slot, ok := c.lookup(id, h)
	if ok {
		return &c.ring[int(uint32(c.table[slot]))-1]
	}
	if c.n == len(c.ring) {
		c.grow()
		slot, _ = c.lookup(id, h)
	}
	idx := c.index(c.n)
	c.ring[idx] = recentID{id: strings.Clone(id), h: h}
	c.table[slot] = tableWord(h, idx)
	c.n++
	for c.n > c.limit {
		c.retireOldest()
	}
	return &c.ring[idx]
}

// index is the ring position of the i-th entry in queue order.
func (c *fpCounts) index(i int) int {
	if i += c.head; i >= len(c.ring) {
		i -= len(c.ring)
	}
	return i
}

// grow doubles the ring (up to limit+4 entries) and rebuilds the table, at
// least twice the ring's size (at most half full).
func (c *fpCounts) grow() {
	// at calls it only when the ring is full, which at its last size
	// (limit+4) it never is: at retires down to limit.
	size := min(max(firstRing, 2*len(c.ring)), c.limit+4)
	ring := make([]recentID, size)
	for i := range c.n {
		ring[i] = c.ring[c.index(i)]
	}
	c.ring, c.head = ring, 0
	t := 16
	for t < 2*size {
		t *= 2
	}
	c.table = make([]uint64, t)
	mask := t - 1
	for i := range c.n {
		h := ring[i].h
		j := int(h>>7) & mask
		for c.table[j] != 0 {
			j = (j + 1) & mask
		}
		c.table[j] = tableWord(h, i)
	}
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
	from := c.head
	e := &c.ring[from]
	slot, _ := c.lookup(e.id, e.h)
	c.head = c.index(1)
	if c.isPinned(e.id) {
		// To the back: the slot freed at the head is always free when the
		// ring is full, and otherwise the one after the newest entry is.
		to := c.index(c.n - 1)
		if to != from {
			c.ring[to] = *e
			*e = recentID{}
			c.table[slot] = tableWord(c.ring[to].h, to)
		}
		return
	}
	var bits [3]uint32
	if e.calls != 0 || e.results != 0 {
		bits[roleTool.table] |= roleTool.bit
	}
	if e.tags != 0 {
		bits[roleTag.table] |= roleTag.bit
	}
	if e.prompts != 0 {
		bits[rolePrompt.table] |= rolePrompt.bit
	}
	if e.daemons != 0 {
		bits[roleDaemon.table] |= roleDaemon.bit
	}
	if e.outcomes != 0 {
		bits[roleOutcome.table] |= roleOutcome.bit
	}
	for t, b := range bits {
		if b != 0 {
			c.old[t].add(e.h, b)
		}
	}
	// Drop what the entry points to: it must not keep a record's strings.
	*e = recentID{}
	c.n--
	c.remove(slot)
}

// remove empties table slot i, moving later entries of its probe run back
// (backward-shift deletion: no tombstones).
func (c *fpCounts) remove(i int) {
	mask := len(c.table) - 1
	for j := (i + 1) & mask; c.table[j] != 0; j = (j + 1) & mask {
		home := int(c.ring[int(uint32(c.table[j]))-1].h>>7) & mask
		// Entry j may fill i when its home is not in (i, j] (cyclically).
		if (j-home)&mask >= (j-i)&mask {
			c.table[i] = c.table[j]
			i = j
		}
	}
	c.table[i] = 0
}

// sure reports whether id has no occurrence in role outside the recent set.
func (c *fpCounts) sure(id string, r role) bool {
	return !c.old[r.table].has(c.hash(id), r.bit)
}

func (c *fpCounts) peek(id string) recentID {
	if slot, ok := c.lookup(id, c.hash(id)); ok {
		return c.ring[int(uint32(c.table[slot]))-1]
	}
	return recentID{}
}

// clearHistory forgets the tool-call ids and prompt tags (a compression
// replaces the history; the settlement hints stay).
func (c *fpCounts) clearHistory() {
	for i := range c.n {
		e := &c.ring[c.index(i)]
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
