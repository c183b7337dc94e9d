package harness

import (
	"context"
	"flag"
	"os"
	"strconv"
	"testing"
)

// The bounded run every build does: a fixed seed, a few thousand crashes
// per harness, every invariant. The long run (ADR 0025):
//
//	TAILPROOF_HARNESS=codex TAILPROOF_HARNESS_RUNS=21000 go test -v -timeout 3h -run TestSimulation ./simulations/harness
func TestSimulationHoldsItsInvariants(t *testing.T) {
	for _, h := range []string{Codex, Claude} {
		if only := os.Getenv("TAILPROOF_HARNESS"); only != "" && only != h {
			continue
		}
		runs := 60
		if s := os.Getenv("TAILPROOF_HARNESS_RUNS"); s != "" {
			runs, _ = strconv.Atoi(s)
		}
		rep := Run(context.Background(), Config{Harness: h, Seed: 1, Runs: runs, Workers: 2})
		t.Log("\n" + rep.Describe())
		if n := rep.Total.Violations(); n > 0 {
			t.Errorf("%s: %d violations", h, n)
		}
		if rep.Total.Crashes == 0 || rep.Total.Interrupted == 0 || rep.Total.Completed == 0 || rep.Total.Stamps == 0 || rep.Total.RepairCut == 0 {
			t.Errorf("%s: the run exercised too little: %+v", h, rep.Total)
		}
	}
}

var (
	replayHarness = flag.String("harness", "", "replay: harness")
	replaySeed    = flag.Uint64("seed", 1, "replay: seed")
	replayRun     = flag.Int("run", 0, "replay: model run")
	replayCrash   = flag.Int("crash", -1, "replay: crash point (-1: all)")
)

// TestReplay replays one model run (or one crash of it) named by a
// violation: go test ./simulations/harness -run TestReplay -args -harness=codex -seed=S -run=N -crash=I
func TestReplay(t *testing.T) {
	if *replayHarness == "" {
		t.Skip("no -harness given")
	}
	res := runOne(*replayHarness, *replaySeed, *replayRun, *replayCrash)
	for _, v := range res.violations {
		t.Error(v.Detail)
	}
}
