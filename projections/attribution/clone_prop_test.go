package attribution_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/simulations"
)

// A clone of a fold (and of the neutral fold) taken after any prefix folds
// on independently of the original: the clone over one continuation, the
// original over another, each ends where a fold from the start of its own
// records ends — over the simulator's transcripts, for every named target
// with the prefix's last uuid and no marker.
func TestCloneFoldsOnIndependently(t *testing.T) {
	runs := 30
	if testing.Short() {
		runs = 8
	}
	var corpus [][]events.Event
	for run := range runs {
		_, tr, err := simulations.SessionFiles(context.Background(), 2, run)
		if err != nil {
			t.Fatal(err)
		}
		var evs []events.Event
		for ev, err := range events.Decode(bytes.NewReader(tr), qwen.Codec{}, events.Options{}) {
			if err == nil {
				evs = append(evs, ev)
			}
		}
		corpus = append(corpus, evs)
	}
	compared := 0
	for run, evs := range corpus {
		other := corpus[(run+1)%len(corpus)]
		targets := []string{"never-named"}
		for _, ev := range evs {
			if rec, ok := ev.Body.(*qwen.Record); ok && rec.DaemonPromptID != "" && !slices.Contains(targets, rec.DaemonPromptID) {
				targets = append(targets, rec.DaemonPromptID)
			}
		}
		for k := 0; k <= len(evs); k += 4 {
			markers := []string{""}
			if k > 0 {
				markers = append(markers, recUUID(evs[k-1]))
			}
			for _, target := range targets {
				for _, marker := range markers {
					f := attribution.New(target, marker, 1)
					for _, e := range evs[:k] {
						f.Add(e)
					}
					c := f.Clone()
					for _, e := range evs[k:] {
						f.Add(e)
					}
					for _, e := range other {
						c.Add(e)
					}
					for _, w := range []struct {
						name string
						got  *attribution.Fold
						evs  []events.Event
					}{{"fold", f, evs}, {"clone", c, append(slices.Clone(evs[:k]), other...)}} {
						want := attribution.New(target, marker, 1)
						for _, e := range w.evs {
							want.Add(e)
						}
						if d := cmp.Diff(want.Evidence(), w.got.Evidence()); d != "" {
							t.Fatalf("run %d, %s cloned after %d for %s marker %q:\n%s", run, w.name, k, target, marker, d)
						}
						compared++
					}
				}
			}
			// The neutral fold: forks of a clone and of the original agree
			// with forks of neutral folds of their own records.
			n := attribution.NewNeutral()
			for _, e := range evs[:k] {
				n.Add(e)
			}
			c := n.Clone()
			for _, e := range evs[k:] {
				n.Add(e)
			}
			for _, e := range other {
				c.Add(e)
			}
			for _, w := range []struct {
				got *attribution.Neutral
				evs []events.Event
			}{{n, evs}, {c, append(slices.Clone(evs[:k]), other...)}} {
				want := attribution.NewNeutral()
				for _, e := range w.evs {
					want.Add(e)
				}
				if w.got.Len() != want.Len() {
					t.Fatalf("run %d: neutral length %d, want %d", run, w.got.Len(), want.Len())
				}
				last := ""
				if len(w.evs) > 0 {
					last = recUUID(w.evs[len(w.evs)-1])
				}
				for _, target := range targets {
					for _, marker := range []string{"", last, "unknown-uuid"} {
						gf, gok := w.got.Fork(target, marker, 1<<50, attribution.Watch{})
						wf, wok := want.Fork(target, marker, 1<<50, attribution.Watch{})
						if gok != wok {
							t.Fatalf("run %d, neutral cloned after %d: fork of %s %q accepted %v, want %v", run, k, target, marker, gok, wok)
						}
						if gok {
							if d := cmp.Diff(wf.Evidence(), gf.Evidence()); d != "" {
								t.Fatalf("run %d, neutral cloned after %d, fork of %s %q:\n%s", run, k, target, marker, d)
							}
						}
						compared++
					}
				}
			}
		}
	}
	t.Logf("%d clones compared", compared)
}
