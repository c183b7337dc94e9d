package simulations

import (
	"context"
	"testing"
)

// BenchmarkScenario measures whole scenarios (model, crash, both
// reconciliations, the second recovery, the dsh log): the per-core rate is
// 1e9 / ns/op.
func BenchmarkScenario(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := RunScenario(ctx, 1, i, false)
		if len(r.Violations) > 0 && r.Tailproof.Wrong == 0 {
			b.Fatal(r.Violations)
		}
	}
}
