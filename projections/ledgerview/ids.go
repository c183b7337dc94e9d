package ledgerview

import (
	"hash/maphash"
	"math"
)

// ids interns the prompt ids of a ledger, exactly: every distinct id's bytes
// in one arena, its order (first-appearance rank) implied by its place, and
// an open-addressing table of orders probed by a maphash of the id and
// confirmed by comparing the bytes — a hash only chooses where to look, never
// decides that two ids are equal. About 13 + 4 + 8 bytes per prompt for ids
// like "prompt-000123", against about 50 for a map[string]int with cloned keys
// (ADR 0030, amended 2026-12-01).
type ids struct {
	seed  maphash.Seed
	arena []byte   // the ids' bytes, in order
	ends  []uint32 // ends[o] is the end of id o in arena; it starts at ends[o-1]
	slots []uint32 // 0 empty, else order+1; len is a power of two
	// big holds the ids from the first that would take the arena past
	// 4 GiB (uint32 offsets) on, so a pathological ledger stays exact
	// rather than wrapping; the arena's orders stay 0…len(ends)-1.
	big map[string]int
}

// arenaLimit is the arena's size bound (a variable so a test can reach it).
var arenaLimit uint64 = math.MaxUint32

func newIDs() ids { return ids{seed: maphash.MakeSeed()} }

func (t *ids) len() int { return len(t.ends) + len(t.big) }

func (t *ids) at(o int) string {
	start := uint32(0)
	if o > 0 {
		start = t.ends[o-1]
	}
	return string(t.arena[start:t.ends[o]])
}

// find returns id's order.
func (t *ids) find(id string) (int, bool) {
	if len(t.slots) > 0 {
		mask := uint64(len(t.slots) - 1)
		for i := maphash.String(t.seed, id) & mask; ; i = (i + 1) & mask {
			s := t.slots[i]
			if s == 0 {
				break
			}
			if o := int(s - 1); t.at(o) == id {
				return o, true
			}
		}
	}
	o, ok := t.big[id]
	return o, ok
}

// add interns an id that find did not find and returns its order.
func (t *ids) add(id string) int {
	o := t.len()
	if t.big != nil || uint64(len(t.arena))+uint64(len(id)) > arenaLimit || int64(o) >= math.MaxUint32-1 {
		if t.big == nil {
			t.big = map[string]int{}
		}
		t.big[id] = o
		return o
	}
	if 4*(len(t.ends)+1) > 3*len(t.slots) {
		t.grow()
	}
	t.arena = append(t.arena, id...)
	t.ends = append(t.ends, uint32(len(t.arena)))
	t.place(o)
	return o
}

func (t *ids) place(o int) {
	mask := uint64(len(t.slots) - 1)
	i := maphash.String(t.seed, t.at(o)) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = uint32(o + 1)
}

func (t *ids) grow() {
	n := 2 * len(t.slots)
	if n < 16 {
		n = 16
	}
	t.slots = make([]uint32, n)
	for o := range t.ends {
		t.place(o)
	}
}
