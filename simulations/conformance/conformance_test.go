package conformance

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

var (
	runs = flag.Int("conformance.runs", 1000, "scenarios TestConformance generates")
	seed = flag.Uint64("conformance.seed", 1, "seed of TestConformance's scenarios")
	save = flag.String("conformance.save", "", "save failing scenarios under this directory")
)

// TestConformance runs generated crash scenarios through the real Qwen Code
// 0.24.4 reconciler and through tailproof. Reference mode must agree exactly;
// every default-mode disagreement must be a deliberate difference.
func TestConformance(t *testing.T) {
	n := *runs
	if testing.Short() {
		n = min(n, 200)
	}
	rep, err := Run(context.Background(), Config{Runs: n, Seed: *seed})
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("reference not available: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if *save != "" {
		for _, o := range rep.Failures {
			d, err := o.Save(*save)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("saved %s", d)
		}
	}
	if !rep.OK() {
		t.Errorf("%d reference-mode disagreements, %d unclassified default-mode disagreements (scenarios above; -conformance.save=DIR writes them as files)",
			rep.RefMismatch, rep.Unclassified)
	}
}
