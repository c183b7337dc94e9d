package qwen

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// smallChunks makes the linear index's chunks tiny for one test, so that
// merges across chunks and conversions of several chunks occur.
func smallChunks(t interface{ Cleanup(func()) }, n int) {
	old := linChunk
	linChunk = n
	t.Cleanup(func() { linChunk = old })
}

// The linear index finds every shared hash wherever its records are (one
// chunk or several), with their count, and nothing when every uuid differs; the record each link's
// parent names is the one a bucketed index looks up (the first with its
// hash, or none).
func TestLinearIndex(t *testing.T) {
	smallChunks(t, 3)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		lin, ref := &index{buckets: make([][]ixEntry, 1), shift: 64}, &index{buckets: make([][]ixEntry, 1), shift: 64}
		lin.keepLinear()
		seen := map[string]int{}
		for i := range n {
			u := fmt.Sprint("u", rapid.IntRange(0, 3*n).Draw(t, fmt.Sprint("u", i)))
			seen[u]++
			// A parent among the uuids (written before or after), one
			// never written, or none.
			var parent []byte
			if p := rapid.IntRange(-1, 3*n).Draw(t, fmt.Sprint("p", i)); p >= 0 {
				parent = []byte(fmt.Sprint("u", p))
			}
			lin.add([]byte(u), parent, parent == nil, uint32(i))
			ref.add([]byte(u), parent, parent == nil, uint32(i))
		}
		lin.resolveLinks()
		var want []uint64
		wantMembers := 0
		for u, c := range seen {
			if c > 1 {
				want = append(want, uuidHash(u))
				wantMembers += c
			}
		}
		slices.Sort(want)
		if dups, members := lin.linearDups(); fmt.Sprint(dups) != fmt.Sprint(want) || members != wantMembers {
			t.Fatalf("linearDups %v (%d records), want %v (%d)", dups, members, want, wantMembers)
		}
		ref.finish()
		if len(lin.links) != len(ref.links) {
			t.Fatalf("links %v, bucketed %v", lin.links, ref.links)
		}
		for _, l := range ref.links {
			if l.parent <= emptyParent {
				continue
			}
			k1, ok1 := lin.lookup(l.parent)
			k2, ok2 := ref.lookup(l.parent)
			if ok1 != ok2 || ok1 && k1 != k2 {
				t.Fatalf("record %d's parent: %d %v, bucketed %d %v", l.k, k1, ok1, k2, ok2)
			}
		}
	})
}

// Scan equals LoadChain then Walk with chunks of two records: a transcript's
// fragments are found across chunks and read back as groups.
func TestScanEqualsTwoPassSmallChunks(t *testing.T) {
	smallChunks(t, 2)
	rapid.Check(t, func(t *rapid.T) {
		checkScan(t, transcriptGen().Draw(t, "file"), LoadOptions{})
	})
}
