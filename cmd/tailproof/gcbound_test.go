package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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

// simulate's bound: GOGC 800 while the live heap is small, the goal then
// capped at 32 MiB above the live heap and 48 MiB in all, the floor past it.
func TestBatchGCBound(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 800},
		{2 << 20, 800},
		{4 << 20, 800},
		{8 << 20, 400},
		{16 << 20, 200},
		{32 << 20, 50},
		{40 << 20, 25},
		{48 << 20, gcMinPercent},
		{1 << 30, gcMinPercent},
	} {
		if got := boundedGCPercentFor(batchBound, tc.live); got != tc.want {
			t.Errorf("boundedGCPercentFor(batch, %d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// setGCBound applies a bound at once, and only when the hook runs: an
// explicit GOGC (no hook) is left alone.
func TestSetGCBound(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	armed := gcHookArmed.Load()
	defer func() { gcHookArmed.Store(armed); activeBound.Store(&interactiveBound) }()
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	gcHookArmed.Store(false)
	setGCBound(&batchBound)
	if p := percent(); p != 100 {
		t.Fatalf("without the hook setGCBound changed GOGC to %d", p)
	}
	gcHookArmed.Store(true)
	// The live-heap figure changes only at the end of a cycle: read after
	// one, it is the figure setGCBound reads.
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	live := s[0].Value.Uint64()
	for _, b := range []*gcBound{&batchBound, &interactiveBound} {
		setGCBound(b)
		if p, want := percent(), boundedGCPercentFor(*b, live); p != want {
			t.Fatalf("bound %+v, %d bytes live: GOGC %d, want %d", *b, live, p, want)
		}
	}
	if boundedGCPercentFor(batchBound, live) <= boundedGCPercentFor(interactiveBound, live) && live < 8<<20 {
		t.Fatalf("with %d bytes live the batch bound is no wider than the interactive one", live)
	}
}

// The batch bound's soft memory limit: 80 MiB while the live heap is
// small, twice the live heap plus 32 MiB once that is more, so a growing
// live heap is never held down; other bounds keep the default.
func TestMemLimitFor(t *testing.T) {
	for _, tc := range []struct {
		b    gcBound
		live uint64
		want int64
	}{
		{interactiveBound, 0, defaultMemLimit},
		{interactiveBound, 100 << 20, defaultMemLimit},
		{batchBound, 0, 80 << 20},
		{batchBound, 24 << 20, 80 << 20},
		{batchBound, 30 << 20, 92 << 20},
		{batchBound, 200 << 20, 432 << 20},
	} {
		if got := memLimitFor(tc.b, tc.live); got != tc.want {
			t.Errorf("memLimitFor(%+v, %d MiB) = %d MiB, want %d MiB", tc.b, tc.live>>20, got>>20, tc.want>>20)
		}
	}
}

// setGCBound sets the limit only when tuneGC owns it (GOMEMLIMIT unset).
func TestSetGCBoundMemoryLimit(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	oldPercent := debug.SetGCPercent(100)
	armed, owned := gcHookArmed.Load(), memLimitOwned.Load()
	defer func() {
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
		gcHookArmed.Store(armed)
		memLimitOwned.Store(owned)
		activeBound.Store(&interactiveBound)
	}()
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	gcHookArmed.Store(true)
	debug.SetMemoryLimit(defaultMemLimit)
	memLimitOwned.Store(false)
	setGCBound(&batchBound)
	if l := limit(); l != defaultMemLimit {
		t.Fatalf("GOMEMLIMIT set: setGCBound changed the limit to %d", l)
	}
	memLimitOwned.Store(true)
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	setGCBound(&batchBound)
	if l, want := limit(), memLimitFor(batchBound, s[0].Value.Uint64()); l != want {
		t.Fatalf("batch bound: limit %d, want %d", l, want)
	}
	setGCBound(&interactiveBound)
	if l := limit(); l != defaultMemLimit {
		t.Fatalf("interactive bound: limit %d, want %d", l, int64(defaultMemLimit))
	}
}
