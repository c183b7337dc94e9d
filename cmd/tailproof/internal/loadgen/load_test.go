package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/loadgen"
)

// The load harness itself, small: every load event is decided once and
// every session's prompt appended once, on both transports.
func TestLoadHarness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := loadgen.LoadConfig{Sessions: 20, Events: 3, Workers: 2, Partitions: 4}
	for _, run := range []func(context.Context, loadgen.LoadConfig) (loadgen.LoadResult, error){loadgen.RunInProcess, loadgen.RunJetStream} {
		r, err := run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(r)
		if r.Decisions != 60 || r.Appended != 20 {
			t.Errorf("%s: %d decisions, %d appended; want 60, 20", r.Transport, r.Decisions, r.Appended)
		}
	}
}
