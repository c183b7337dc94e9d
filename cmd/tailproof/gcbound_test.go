package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestBoundedGCPercent(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, gcMaxPercent},
		{1 << 20, gcMaxPercent},
		{4 << 20, gcMaxPercent},
		{5 << 20, 320},
		{10 << 20, 160},
		{12 << 20, 133},
		{20 << 20, 60},
		{24 << 20, 33},
		{26 << 20, 25},
		{40 << 20, 25},
		{80 << 20, 25},
		{1 << 30, gcMinPercent},
	} {
		if got := boundedGCPercent(tc.live); got != tc.want {
			t.Errorf("boundedGCPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// The hook lowers GOGC once the live heap is large and raises it again when
// the heap is released.
func TestBoundGCHeadroomFollowsLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	boundGCHeadroom()
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	waitFor := func(what string, ok func(int) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok(percent()) {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC %d, want %s", percent(), what)
			}
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
	live := make([][]byte, 80)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	waitFor("the floor with 80 MiB live", func(p int) bool { return p == gcMinPercent })
	runtime.KeepAlive(live)
	live = nil
	// Other tests of the package may leave a few MiB live: well above the
	// floor is enough to show the percent follows the heap back up.
	waitFor("above 100 once released", func(p int) bool { return p > 100 })
}
