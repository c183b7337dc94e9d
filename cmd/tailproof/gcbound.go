package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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

// boundedGCPercent is the GOGC that puts the next heap goal at most
// gcHeadroom above a live heap of live bytes and at most gcHeapGoal, within
// [gcMinPercent, gcMaxPercent].
func boundedGCPercent(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	if live >= gcHeapGoal {
		return gcMinPercent
	}
	p := uint64(100) * min(gcHeadroom, gcHeapGoal-live) / live
	switch {
	case p > gcMaxPercent:
		return gcMaxPercent
	case p < gcMinPercent:
		return gcMinPercent
	}
	return int(p)
}

// boundGCHeadroom sets GOGC to boundedGCPercent of the live heap after
// every collection, for the life of the process. A finalizer on a fresh
// sentinel runs once per cycle (the sentinel is unreachable as soon as it is
// made) and re-arms itself; it changes the percent only when it moved by more
// than an eighth or reached a bound, so most cycles cost one metrics read.
func boundGCHeadroom() {
	cur := gcMaxPercent
	debug.SetGCPercent(cur)
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		sentinel := new([16]byte)
		runtime.SetFinalizer(sentinel, func(*[16]byte) {
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 {
				p := boundedGCPercent(s[0].Value.Uint64())
				if p != cur && (p == gcMinPercent || p == gcMaxPercent || p*8 < cur*7 || p*8 > cur*9) {
					cur = p
					debug.SetGCPercent(p)
				}
			}
			arm()
		})
	}
	arm()
}
