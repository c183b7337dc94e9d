package qwen

import (
	"fmt"
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

// The linear index finds a shared hash wherever the two records are (one
// chunk or two), and nothing when every uuid differs; converted to buckets
// mid-way it answers as an index built bucketed from the start.
func TestLinearIndex(t *testing.T) {
	smallChunks(t, 3)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		convertAt := rapid.IntRange(0, n+1).Draw(t, "convert")
		lin, ref := &index{buckets: make([][]ixEntry, 1), shift: 64}, &index{buckets: make([][]ixEntry, 1), shift: 64}
		lin.keepLinear()
		seen, dup := map[string]bool{}, false
		for i := range n {
			u := fmt.Sprint("u", rapid.IntRange(0, 3*n).Draw(t, fmt.Sprint("u", i)))
			dup = dup || seen[u]
			seen[u] = true
			if i == convertAt {
				lin.toBuckets()
			}
			lin.add([]byte(u), nil, true, uint32(i))
			ref.add([]byte(u), nil, true, uint32(i))
		}
		if lin.linear {
			if got := lin.linearUnique(); got == dup {
				t.Fatalf("linearUnique %v with a repeated uuid %v", got, dup)
			}
			return
		}
		lin.finish()
		ref.finish()
		if len(lin.groups) != len(ref.groups) || (len(ref.groups) > 0) != dup {
			t.Fatalf("groups %v, bucketed from the start %v, repeated %v", lin.groups, ref.groups, dup)
		}
		for k := range uint32(n) {
			g1, ok1 := lin.group(k)
			g2, ok2 := ref.group(k)
			if ok1 != ok2 || fmt.Sprint(g1) != fmt.Sprint(g2) || lin.first(k) != ref.first(k) {
				t.Fatalf("record %d: group %v %v, want %v %v", k, g1, ok1, g2, ok2)
			}
		}
	})
}

// Scan equals LoadChain then Walk with chunks of two records: a transcript's
// fragments are found across chunks and make pass 1 run again.
func TestScanEqualsTwoPassSmallChunks(t *testing.T) {
	smallChunks(t, 2)
	rapid.Check(t, func(t *rapid.T) {
		checkScan(t, transcriptGen().Draw(t, "file"), LoadOptions{})
	})
}
