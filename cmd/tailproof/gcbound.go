package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The CLI's garbage headroom (ADR 0030, amended 2026-12-01). GOGC 400 is
// right for a decision whose live heap is a few MiB — a 600 MB transcript is
// streamed — but it lets the heap reach five times the live heap, so a
// command that must keep per-turn facts of a million-record session (1 GiB
// of 600-byte records: ~30 MiB live) would peak at 150 MiB of mostly
// garbage. After every collection the percent is set so that the next goal
// is the live heap plus at most gcHeadroom bytes and at most gcHeapGoal in
// all: 400 up to 4 MiB live, falling as the live heap grows, never below
// gcMinPercent (a floor, so a large live heap is collected at 1.25× it rather
// than continuously). The goal's cap (ADR 0039) is what keeps a command with
// 20–25 MiB live — 1 GiB of 600-byte records — under 64 MiB of RSS: the
// process takes about 16 MiB before its heap, the runtime's metadata ~4 MiB,
// and freed pages not yet returned ~10% of the goal. Collections of a heap
// that size cost ~1% of the CPU time (gctrace), so the cap is nearly free;
// a live heap of 4 MiB or less keeps 400. The headroom was 20 MiB until
// 2026-12-02 (ADR 0042): a 600 MB reconcile of Go's source tree as tool
// outputs (218,104 records, 6-9 MiB live) peaked at 48-50 MiB of RSS with
// it, 43-45 MiB with 16, at the same CPU time (seven interleaved runs).
const (
	gcMaxPercent = 400
	gcMinPercent = 25
	gcHeadroom   = 16 << 20
	gcHeapGoal   = 32 << 20
)

// gcBound is a garbage bound: the next heap goal is the live heap plus at
// most headroom bytes and at most heapGoal in all, as a percent within
// [gcMinPercent, maxPercent].
type gcBound struct {
	maxPercent int
	headroom   uint64
	heapGoal   uint64
	// memLimit, when set, is the soft memory limit while the bound is
	// active (and GOMEMLIMIT is not in the environment): the hook runs
	// after a cycle, so a goal set from a small live heap stands until it
	// has run, and a live heap that jumps meanwhile (2 → 10 MiB) would be
	// collected only at 9× it. The limit is raised to twice the live heap
	// plus 32 MiB when that is more, so it never holds a growing live heap
	// down (no death spiral).
	memLimit uint64
}

// interactiveBound is every command's bound (the constants above).
var interactiveBound = gcBound{maxPercent: gcMaxPercent, headroom: gcHeadroom, heapGoal: gcHeapGoal}

// batchBound is simulate's (ADR 0043): a CPU-bound batch whose live heap is
// 1–5 MiB and whose garbage is ~25 KB a scenario. Under the interactive
// bound its goal is ~16 MiB, so it collects every ~13 MiB — 89 cycles in
// 50,000 scenarios with two workers, each stopping both of them. GOGC 800
// also raises the runtime's minimum heap goal (4 MiB × GOGC/100) to 32 MiB:
// 41 cycles. Its goal is at most 32 MiB above the live heap and 48 MiB in
// all, so a live heap that grows
// (--ambiguity keeps a key per dangling prompt) falls back towards
// gcMinPercent as under the interactive bound, and its memory limit (see
// gcBound.memLimit) keeps a live-heap jump from running at 9× it until the
// hook has run: peak RSS ~80 MiB (51–75 before). A higher GOGC's minimum goal
// (1,600: 64 MiB, 3,200: 128 MiB) took peak RSS to 101 and 150 MiB for no
// gain the loaded machine could tell apart.
var batchBound = gcBound{maxPercent: 800, headroom: 32 << 20, heapGoal: 48 << 20, memLimit: 80 << 20}

// defaultMemLimit is every command's soft memory limit (main.tuneGC).
const defaultMemLimit = 256 << 20

// memLimitOwned says tuneGC set the limit (GOMEMLIMIT unset), so a bound
// may change it.
var memLimitOwned atomic.Bool

// memLimitFor is the soft memory limit under b with live bytes live: the
// default for a bound without one.
func memLimitFor(b gcBound, live uint64) int64 {
	if b.memLimit == 0 {
		return defaultMemLimit
	}
	return int64(max(b.memLimit, 2*live+32<<20))
}

// activeBound is the bound the collection hook applies; setGCBound changes it.
var activeBound atomic.Pointer[gcBound]

func init() { activeBound.Store(&interactiveBound) }

// boundedGCPercent is boundedGCPercentFor under the interactive bound.
func boundedGCPercent(live uint64) int { return boundedGCPercentFor(interactiveBound, live) }

// boundedGCPercentFor is the GOGC that puts the next heap goal at most
// b.headroom above a live heap of live bytes and at most b.heapGoal, within
// [gcMinPercent, b.maxPercent].
func boundedGCPercentFor(b gcBound, live uint64) int {
	if live == 0 {
		return b.maxPercent
	}
	if live >= b.heapGoal {
		return gcMinPercent
	}
	p := uint64(100) * min(b.headroom, b.heapGoal-live) / live
	switch {
	case p > uint64(b.maxPercent):
		return b.maxPercent
	case p < gcMinPercent:
		return gcMinPercent
	}
	return int(p)
}

// setGCBound makes b the bound from the next collection on, when the hook
// runs (GOGC unset in the environment: boundGCHeadroom was armed); it is a
// no-op otherwise, so an explicit GOGC still wins.
func setGCBound(b *gcBound) {
	if !gcHookArmed.Load() {
		return
	}
	activeBound.Store(b)
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var live uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	p := boundedGCPercentFor(*b, live)
	gcPercent.Store(int64(p))
	debug.SetGCPercent(p)
	if memLimitOwned.Load() {
		debug.SetMemoryLimit(memLimitFor(*b, live))
	}
}

var (
	gcHookArmed atomic.Bool  // boundGCHeadroom ran
	gcPercent   atomic.Int64 // the percent the hook last set
)

// boundGCHeadroom sets GOGC to boundedGCPercent of the live heap after
// every collection, for the life of the process. A finalizer on a fresh
// sentinel runs once per cycle (the sentinel is unreachable as soon as it is
// made) and re-arms itself; it changes the percent only when it moved by more
// than an eighth or reached a bound, so most cycles cost one metrics read.
func boundGCHeadroom() {
	gcHookArmed.Store(true)
	gcPercent.Store(int64(activeBound.Load().maxPercent))
	debug.SetGCPercent(int(gcPercent.Load()))
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		sentinel := new([16]byte)
		runtime.SetFinalizer(sentinel, func(*[16]byte) {
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 {
				b := activeBound.Load()
				live := s[0].Value.Uint64()
				if b.memLimit != 0 && memLimitOwned.Load() {
					debug.SetMemoryLimit(memLimitFor(*b, live))
				}
				p := boundedGCPercentFor(*b, live)
				if cur := int(gcPercent.Load()); p != cur && (p == gcMinPercent || p == b.maxPercent || p*8 < cur*7 || p*8 > cur*9) {
					gcPercent.Store(int64(p))
					debug.SetGCPercent(p)
				}
			}
			arm()
		})
	}
	arm()
}
