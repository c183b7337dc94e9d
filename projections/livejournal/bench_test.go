package livejournal

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkMillionEventTurn streams one turn of 1,000,000 events through a
// journal with the default bounds (10,000 events / 8 MiB). Each event is a
// fresh allocation with its own payload, as a daemon's would be, so the heap
// figures show whether evicted events are really released.
//
// Reported per turn:
//   - B/op, allocs/op: everything allocated, the events themselves included
//     (the journal's own share is the ring, at most MaxEvents+1 slots);
//   - retained-B, retained-events: the journal's content at the end;
//   - live-heap-B: heap in use after a forced GC at the end of the turn,
//     above the heap before it, with the journal still reachable;
//   - peak-live-heap-B: the largest such figure sampled every 100,000 events.
//
// Run: go test -run='^$' -bench=MillionEventTurn -benchtime=3x ./projections/livejournal
func BenchmarkMillionEventTurn(b *testing.B) {
	const events = 1_000_000
	for _, size := range []int{200, 2048} {
		b.Run(fmt.Sprintf("payload=%dB", size), func(b *testing.B) {
			tmpl := []byte(`{"text":"` + strings.Repeat("x", size-11) + `"}`)
			var retained, retainedEvents int
			var live, peak uint64
			b.ReportAllocs()
			for b.Loop() {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc
				j, err := New(DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				peak = 0
				for i := 1; i <= events; i++ {
					data := make([]byte, len(tmpl))
					copy(data, tmpl)
					if _, err := j.Append(&Event{ID: int64(i), Type: "agent_message_chunk", PromptID: "p1", Data: data}); err != nil {
						b.Fatal(err)
					}
					if i%100_000 == 0 {
						b.StopTimer()
						runtime.GC()
						runtime.ReadMemStats(&ms)
						if h := ms.HeapAlloc - min(base, ms.HeapAlloc); h > peak {
							peak = h
						}
						b.StartTimer()
					}
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc - min(base, ms.HeapAlloc)
				retained, retainedEvents = j.Bytes(), j.Len()
				runtime.KeepAlive(j)
				b.StartTimer()
			}
			b.ReportMetric(float64(retained), "retained-B")
			b.ReportMetric(float64(retainedEvents), "retained-events")
			b.ReportMetric(float64(live), "live-heap-B")
			b.ReportMetric(float64(peak), "peak-live-heap-B")
		})
	}
}
