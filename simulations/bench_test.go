package simulations

import (
	"context"
	"testing"
	"time"
)

// BenchmarkScenario measures whole crash scenarios (the model's timeline,
// each crash point's fork, crash, both recoveries, the second recovery, and
// the run's dsh log): one op is one model run (8–47 scenarios, one per action),
// and ns/scenario is the per-core cost (per-core rate = 1e9 / ns/scenario).
func BenchmarkScenario(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	run, scenarios := 0, 0
	start := time.Now()
	for b.Loop() {
		runModel(ctx, 1, run, 0, 0, 1<<30, false, func(r Result) {
			scenarios++
			if len(r.Violations) > 0 || len(r.WrongTerminals) > 0 {
				b.Fatal(r.Violations, r.WrongTerminals)
			}
		})
		run++
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(scenarios), "ns/scenario")
}
