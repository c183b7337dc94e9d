package qwen

import "slices"

// linChunk is the size of the linear index's chunks (a variable so that a
// test can make chunks small): a chunk is allocated whole, so the index
// never copies itself as it grows, and sorts in cache at the end.
var linChunk = 1 << 16

// keepLinear makes an empty index keep hashes in record order (Scan, while
// the chain is linear).
func (ix *index) keepLinear() { ix.linear = true }

func (ix *index) addLinear(h uint64) {
	last := len(ix.lin) - 1
	if last < 0 || len(ix.lin[last]) >= linChunk {
		c := 0 // the first chunk grows: a small session's index stays small
		if last >= 0 {
			c = linChunk
		}
		ix.lin = append(ix.lin, make([]uint64, 0, c))
		last++
	}
	ix.lin[last] = append(ix.lin[last], h)
}

// noRecord is resolveLinks' mark for a parent no record has (a gap).
const noRecord = ^uint32(0)

// resolveLinks finds, for every link naming a parent record, the first
// record whose uuid hash is the parent's — what lookup answers — by one pass
// over the hashes in record order, so that a branched transcript keeps the
// linear index (ADR 0039, amendment of 2026-12-02). It runs before
// linearUnique, which sorts the hashes. A bit filter on the hash's low bits
// spares most records the map lookup.
func (ix *index) resolveLinks() {
	ix.parents = map[uint64]uint32{}
	for _, l := range ix.links {
		if l.parent > emptyParent {
			ix.parents[l.parent] = noRecord
		}
	}
	if len(ix.parents) == 0 {
		return
	}
	size := 64
	for size < 16*len(ix.parents) {
		size <<= 1
	}
	filter, mask := make([]uint64, size/64), uint64(size-1)
	for h := range ix.parents {
		b := h & mask
		filter[b>>6] |= 1 << (b & 63)
	}
	k := uint32(0)
	for _, c := range ix.lin {
		for _, h := range c {
			if b := h & mask; filter[b>>6]&(1<<(b&63)) != 0 {
				if f, ok := ix.parents[h]; ok && f == noRecord {
					ix.parents[h] = k
				}
			}
			k++
		}
	}
}

// linearDups returns the uuid hashes that several records of a linear index
// share, ascending, and how many records have them. It sorts the chunks in
// place and merges them, so the ranks are lost: afterwards only n, prev, the
// links, the skews and what resolveLinks found may be read.
func (ix *index) linearDups() (dups []uint64, members int) {
	for _, c := range ix.lin {
		slices.Sort(c)
	}
	// A k-way merge of the sorted chunks through a binary min-heap of
	// cursors: equal hashes meet at the heap's top one after the other.
	type cursor struct{ c []uint64 }
	h := make([]cursor, 0, len(ix.lin))
	for _, c := range ix.lin {
		if len(c) > 0 {
			h = append(h, cursor{c})
		}
	}
	less := func(i, j int) bool { return h[i].c[0] < h[j].c[0] }
	down := func(i int) {
		for {
			m := i
			if l := 2*i + 1; l < len(h) && less(l, m) {
				m = l
			}
			if r := 2*i + 2; r < len(h) && less(r, m) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	var prev uint64
	for first := true; len(h) > 0; first = false {
		v := h[0].c[0]
		if !first && v == prev {
			if len(dups) == 0 || dups[len(dups)-1] != v {
				dups = append(dups, v)
				members++ // the first of them
			}
			members++
		}
		prev = v
		if h[0].c = h[0].c[1:]; len(h[0].c) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return dups, members
}
