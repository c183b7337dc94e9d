package qwen

import (
	"bytes"
	"math/bits"
	"slices"
	"sync"
)

// The chain index: what pass 1 keeps of each conversation record so that
// the active chain can be rebuilt without holding records.
//
// A record's parent is almost always the conversation record written just
// before it; the index keeps that as the default and stores only the
// exceptions. Per record it holds one 12-byte entry — a 64-bit FNV-1a hash
// of the uuid and the record's conversation index k (its rank among
// conversation records) — bucketed by the hash's top bits so that the
// end-of-pass sort runs in cache. Exceptions are kept apart: links for
// records whose parent is not exactly (by bytes) the previous record's uuid
// (roots, rewinds, gaps), and skews for the object indexes (an object that
// is not a conversation record shifts the mapping from k to the object
// index). ADR 0020 has the sizes.
//
// Scan's index keeps less (ADR 0039 and its amendment of 2026-12-02): the
// uuid hashes alone, 8 bytes a record, in record order in chunks — a record's
// rank is its place — because the only questions left at the end are which
// record each link's parent is (resolveLinks, one pass over the hashes in
// record order, before they are sorted) and which hashes several records
// share (linearDups, a merge of the sorted chunks). The records of a shared
// hash are found by reading their identities back (groupsByReadBack), which
// the uuid strings of such a group need anyway. LoadChain keeps the bucketed
// form: the oracle Scan is tested against.

// emptyParent stands for parentUuid "": a root like null, but a different
// value when fragments' parents are compared.
const emptyParent = 1

// uuidHash is FNV-1a; 0 and 1 are reserved for null and "" parents.
// Collisions are possible (and can be forced by a hostile file): records
// that share a hash are read back and compared by their strings, and Walk
// checks every link with the real strings.
func uuidHash[S string | []byte](s S) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	if h <= emptyParent {
		h += 2
	}
	return h
}

// ixEntry is 12 bytes: the uuid hash in two halves (an 8-byte field would
// pad the entry to 16) and the conversation index.
type ixEntry struct{ hi, lo, k uint32 }

func (e ixEntry) hash() uint64 { return uint64(e.hi)<<32 | uint64(e.lo) }

func cmpEntry(a, b ixEntry) int {
	switch ha, hb := a.hash(), b.hash(); {
	case ha < hb:
		return -1
	case ha > hb:
		return 1
	}
	return int(a.k) - int(b.k)
}

// link is a record whose parent is not the previous conversation record:
// parent is the parent's hash, 0 for null, emptyParent for "".
type link struct {
	k      uint32
	parent uint64
}

// skew: from conversation index k on, the object index is k + skew.
type skew struct{ k, skew uint32 }

// Buckets: one while small (a session's index must cost little), then
// 1<<bucketBits by the hash's top bits.
const (
	bucketBits     = 8
	splitAtEntries = 1 << 15
)

type index struct {
	n        uint32 // conversation records indexed
	linear   bool   // hashes are in lin (k order until linearDups sorts them), not in buckets
	lin      [][]uint64
	buckets  [][]ixEntry
	shift    uint // bucket of h: h >> shift (64 with one bucket)
	links    []link
	skews    []skew
	prev     []byte // uuid of record n-1
	lastSkew uint32
	// parents: a linear index's resolved links, parent hash → first
	// record with that hash or noRecord (resolveLinks).
	parents map[uint64]uint32

	// After finish: the records that share a uuid hash with another, as
	// groups (k ascending), and each member's group, sorted by k.
	groups  [][]uint32
	members []member
}

type member struct{ k, group uint32 }

var indexPool = sync.Pool{New: func() any { return &index{buckets: make([][]ixEntry, 1), shift: 64} }}

func getIndex() *index { return indexPool.Get().(*index) }

// maxPooledEntries bounds what a pooled index keeps: a session's index
// should not be regrown per decision, a huge one should not stay pinned.
const maxPooledEntries = 8 << 10

func putIndex(ix *index) {
	if cap(ix.buckets[0]) > maxPooledEntries || len(ix.buckets) > 1 || cap(ix.links) > maxPooledEntries ||
		cap(ix.skews) > maxPooledEntries || cap(ix.prev) > 1<<10 || len(ix.lin) > 1 ||
		len(ix.lin) == 1 && cap(ix.lin[0]) > maxPooledEntries {
		*ix = index{buckets: make([][]ixEntry, 1), shift: 64}
	} else {
		ix.n, ix.lastSkew, ix.linear = 0, 0, false
		ix.buckets[0] = ix.buckets[0][:0]
		if len(ix.lin) == 1 {
			ix.lin[0] = ix.lin[0][:0]
		}
		ix.links, ix.skews, ix.prev = ix.links[:0], ix.skews[:0], ix.prev[:0]
		ix.groups, ix.members, ix.parents = nil, nil, nil
	}
	indexPool.Put(ix)
}

// add indexes conversation record k = ix.n, object index ord, and reports
// whether its parent is exactly the previous conversation record's uuid.
func (ix *index) add(uuid, parent []byte, parentNull bool, ord uint32) (follows bool) {
	k := ix.n
	if s := ord - k; s != ix.lastSkew {
		ix.skews = append(ix.skews, skew{k, s})
		ix.lastSkew = s
	}
	h := uuidHash(uuid)
	if ix.linear {
		ix.addLinear(h)
	} else {
		b := &ix.buckets[h>>ix.shift&uint64(len(ix.buckets)-1)]
		*b = append(*b, ixEntry{uint32(h >> 32), uint32(h), k})
	}
	follows = k > 0 && len(parent) > 0 && bytes.Equal(parent, ix.prev)
	if !follows {
		var ph uint64 // null
		switch {
		case len(parent) > 0:
			ph = uuidHash(parent)
		case !parentNull:
			ph = emptyParent
		}
		ix.links = append(ix.links, link{k, ph})
	}
	ix.prev = append(ix.prev[:0], uuid...)
	ix.n++
	if !ix.linear && ix.n == splitAtEntries && len(ix.buckets) == 1 {
		ix.split()
	}
	return follows
}

// split spreads the single bucket over 1<<bucketBits.
func (ix *index) split() {
	all := ix.buckets[0]
	ix.buckets = make([][]ixEntry, 1<<bucketBits)
	ix.shift = 64 - bucketBits
	per := len(all) >> bucketBits
	for _, e := range all {
		b := &ix.buckets[e.hash()>>ix.shift]
		if *b == nil {
			*b = make([]ixEntry, 0, 2*per)
		}
		*b = append(*b, e)
	}
}

// ord is the object index of conversation record k.
func (ix *index) ord(k uint32) uint32 {
	i, found := slices.BinarySearchFunc(ix.skews, k, func(s skew, k uint32) int { return int(s.k) - int(k) })
	if !found {
		i--
	}
	if i < 0 {
		return k
	}
	return k + ix.skews[i].skew
}

// objectBits maps a bit per conversation record (kbits) to a bit per object
// index, for objects objects: set bits in k order, the skews in step.
func (ix *index) objectBits(kbits []uint64, objects int) []uint64 {
	out := make([]uint64, (objects+63)/64)
	si, s := -1, uint32(0)
	for w, word := range kbits {
		for word != 0 {
			k := uint32(w<<6 + bits.TrailingZeros64(word))
			word &= word - 1
			for si+1 < len(ix.skews) && ix.skews[si+1].k <= k {
				si++
				s = ix.skews[si].skew
			}
			o := k + s
			out[o>>6] |= 1 << (o & 63)
		}
	}
	return out
}

// parentOf returns record k's link, or ok false when its parent is record
// k-1's uuid.
func (ix *index) parentOf(k uint32) (parent uint64, ok bool) {
	i, found := slices.BinarySearchFunc(ix.links, k, func(l link, k uint32) int { return int(l.k) - int(k) })
	if !found {
		return 0, false
	}
	return ix.links[i].parent, true
}

// finish sorts the buckets and finds the hashes several records share.
func (ix *index) finish() {
	for _, b := range ix.buckets {
		slices.SortFunc(b, cmpEntry)
		for i := 0; i < len(b); {
			j := i + 1
			for j < len(b) && b[j].hash() == b[i].hash() {
				j++
			}
			if j-i > 1 {
				g := make([]uint32, 0, j-i)
				for _, e := range b[i:j] {
					g = append(g, e.k)
					ix.members = append(ix.members, member{e.k, uint32(len(ix.groups))})
				}
				ix.groups = append(ix.groups, g)
			}
			i = j
		}
	}
	slices.SortFunc(ix.members, func(a, b member) int { return int(a.k) - int(b.k) })
}

// group returns the group of record k, if it shares its uuid hash.
func (ix *index) group(k uint32) ([]uint32, bool) {
	i, found := slices.BinarySearchFunc(ix.members, k, func(m member, k uint32) int { return int(m.k) - int(k) })
	if !found {
		return nil, false
	}
	return ix.groups[ix.members[i].group], true
}

// lookup returns the first record (lowest k) whose uuid hash is h.
func (ix *index) lookup(h uint64) (uint32, bool) {
	if ix.parents != nil {
		k, ok := ix.parents[h]
		return k, ok && k != noRecord
	}
	b := ix.buckets[h>>ix.shift&uint64(len(ix.buckets)-1)]
	i, _ := slices.BinarySearchFunc(b, h, func(e ixEntry, h uint64) int {
		switch eh := e.hash(); {
		case eh < h:
			return -1
		case eh > h:
			return 1
		}
		return 0
	})
	if i < len(b) && b[i].hash() == h {
		return b[i].k, true
	}
	return 0, false
}

// first is the first fragment of record k's uuid (by hash).
func (ix *index) first(k uint32) uint32 {
	if g, ok := ix.group(k); ok {
		return g[0]
	}
	return k
}
