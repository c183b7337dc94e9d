package attribution_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/simulations"
)

// A fork of the neutral fold, whenever Fork accepts it, folds the rest of
// the chain to the same evidence as a fold started at the chain's first
// record: over the transcripts of the simulator's daemon model, at every
// prefix, for every prompt id the transcript names and one it does not,
// with the prefix's last uuid, an earlier uuid, an unknown uuid and no
// marker, with and without a watched predecessor window.
func TestForkFoldsAsFromTheStart(t *testing.T) {
	runs := 60
	if testing.Short() {
		runs = 12
	}
	forks, refused := 0, 0
	for run := range runs {
		_, tr, err := simulations.SessionFiles(context.Background(), 1, run)
		if err != nil {
			t.Fatal(err)
		}
		var evs []events.Event
		for ev, err := range events.Decode(bytes.NewReader(tr), qwen.Codec{}, events.Options{}) {
			if err == nil {
				evs = append(evs, ev)
			}
		}
		targets := []string{"never-named"}
		for _, ev := range evs {
			if rec, ok := ev.Body.(*qwen.Record); ok && rec.DaemonPromptID != "" {
				targets = append(targets, rec.DaemonPromptID)
			}
		}
		n := attribution.NewNeutral()
		for k := 0; k <= len(evs); k++ {
			if k > 0 {
				n.Add(evs[k-1])
			}
			if k%3 != 0 && k != len(evs) {
				continue // every third prefix keeps the test quick
			}
			markers := []string{"", "unknown-uuid"}
			if k > 0 {
				markers = append(markers, recUUID(evs[k-1]), recUUID(evs[0]))
			}
			for _, target := range targets {
				for _, marker := range markers {
					for _, w := range []attribution.Watch{{}, {On: true, From: 0, To: 1 << 62}} {
						at := float64(1) // stamped records are all after it
						if k > 0 && evs[k-1].Time.OK {
							at = float64(evs[k-1].Time.Ms + 1)
						}
						f, ok := n.Fork(target, marker, at, w)
						if !ok {
							refused++
							continue
						}
						forks++
						want := attribution.New(target, marker, at)
						if w.On {
							want.WatchPredecessor(w.From, w.To)
						}
						for _, e := range evs[:k] {
							want.Add(e)
						}
						for _, e := range evs[k:] {
							f.Add(e)
							want.Add(e)
						}
						if diff := cmp.Diff(want.Evidence(), f.Evidence()); diff != "" {
							t.Fatalf("run %d, fork after %d records for %s marker %q watch %v: (-from the start +fork)\n%s", run, k, target, marker, w, diff)
						}
						if got, want := f.TurnEndIdx(), want.TurnEndIdx(); got != want {
							t.Fatalf("run %d, fork after %d: turn end %d, want %d", run, k, got, want)
						}
					}
				}
			}
		}
	}
	if forks == 0 || refused == 0 {
		t.Fatalf("%d forks, %d refused: the corpus does not exercise both", forks, refused)
	}
	t.Logf("%d forks compared, %d refused", forks, refused)
}

func recUUID(ev events.Event) string {
	if rec, ok := ev.Body.(*qwen.Record); ok {
		return rec.UUID
	}
	return ""
}
