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
		{5 << 20, gcMaxPercent},
		{10 << 20, 200},
		{40 << 20, 50},
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
	waitFor := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for percent() != want {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC %d, want %d", percent(), want)
			}
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
	live := make([][]byte, 80)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	waitFor(gcMinPercent)
	runtime.KeepAlive(live)
	live = nil
	waitFor(gcMaxPercent)
}
