package apihistory

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestRecentSetEqualsQueue holds the recent set's ring and table to the
// queue they implement — a slice of ids, oldest first: a new id goes to the
// back, and while more than limit are held the oldest leaves, or goes to
// the back when pinned — through random lookups, pins and clones, under
// hashes that crowd a few home slots with distinct tags (long probe runs,
// so the table's backward-shift deletion is exercised) or give every id the
// same hash. After each step every queued id is found with its own count,
// in queue order, and every retired id is not found.
func TestRecentSetEqualsQueue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		homes := rapid.IntRange(1, 6).Draw(t, "homes")
		same := rapid.Bool().Draw(t, "same hash")
		hash := func(s string) uint64 {
			h := uint64(14695981039346656037)
			for i := 0; i < len(s); i++ {
				h = (h ^ uint64(s[i])) * 1099511628211
			}
			if same {
				return 42
			}
			return h&^0xFFFFFFFF | (h%uint64(homes))<<7
		}
		limit := rapid.IntRange(4, 40).Draw(t, "limit")
		c := newFPCounts(hash, limit)
		var queue []string
		count := map[string]int32{}
		ops := rapid.IntRange(1, 400).Draw(t, "ops")
		for range ops {
			id := fmt.Sprintf("id-%d", rapid.IntRange(0, 3*limit).Draw(t, "id"))
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				c.pin(rapid.IntRange(0, 2).Draw(t, "pin"), id)
				continue
			case 1:
				c = c.clone()
				continue
			}
			c.at(id).calls++
			if !slices.Contains(queue, id) {
				queue = append(queue, id)
				count[id] = 0
				for len(queue) > limit {
					old := queue[0]
					queue = queue[1:]
					if c.isPinned(old) {
						queue = append(queue, old)
					} else {
						delete(count, old)
					}
				}
			}
			count[id]++
			if c.n != len(queue) {
				t.Fatalf("%d entries, the queue holds %d", c.n, len(queue))
			}
			for i, q := range queue {
				if got := c.ring[c.index(i)].id; got != q {
					t.Fatalf("queue position %d holds %q, want %q", i, got, q)
				}
				if e := c.peek(q); e.id != q || e.calls != count[q] {
					t.Fatalf("%q: found %q with %d calls, want %d", q, e.id, e.calls, count[q])
				}
			}
			for i := range 3*limit + 1 {
				if q := fmt.Sprintf("id-%d", i); count[q] == 0 && c.peek(q).id != "" {
					t.Fatalf("%q is retired but still found", q)
				}
			}
		}
	})
}
