package ledgerview

import (
	"fmt"
	"testing"
)

// Every id added is found at its order, ids never added are not found (the
// probe compares bytes, so ids that share a slot stay apart), and ids past the
// arena's bound go to the overflow map and keep their orders.
func TestIDsExact(t *testing.T) {
	defer func(l uint64) { arenaLimit = l }(arenaLimit)
	arenaLimit = 200_000
	tab := newIDs()
	var all []string
	for i := range 30_000 {
		id := fmt.Sprintf("prompt-%06d", i)
		if i%7 == 0 {
			id = fmt.Sprintf("p%d", i) // short and uneven lengths
		}
		if _, ok := tab.find(id); ok {
			t.Fatalf("%q found before it was added", id)
		}
		if o := tab.add(id); o != i {
			t.Fatalf("add(%q) = %d, want %d", id, o, i)
		}
		all = append(all, id)
	}
	if len(tab.big) == 0 {
		t.Fatal("the arena bound was never reached: the overflow map is untested")
	}
	for i, id := range all {
		if o, ok := tab.find(id); !ok || o != i {
			t.Fatalf("find(%q) = %d, %v, want %d", id, o, ok, i)
		}
		if _, ok := tab.find(id + "x"); ok {
			t.Fatalf("find(%q) found an id never added", id+"x")
		}
	}
	if _, ok := tab.find(""); ok {
		t.Fatal(`find("") found an id never added`)
	}
	if o := tab.add(""); o != len(all) {
		t.Fatalf(`add("") = %d, want %d`, o, len(all))
	}
	if o, ok := tab.find(""); !ok || o != len(all) {
		t.Fatalf(`find("") = %d, %v after adding it`, o, ok)
	}
}
