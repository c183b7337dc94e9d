package apihistory_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
)

// TestCloneFoldsOnIndependently: a clone taken after any prefix, and the
// fold it was taken from, each folded on over a different continuation,
// return what a fresh fold of their own records returns — in every mode.
func TestCloneFoldsOnIndependently(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		other := histtest.Records(t)
		opts := apihistory.Options{StripThoughts: rapid.Bool().Draw(t, "strip"), Keep: rapid.IntRange(1, 4).Draw(t, "keep"),
			Fingerprints: rapid.Bool().Draw(t, "fingerprints")}
		fp := opts.Fingerprints && rapid.Bool().Draw(t, "tiny recent set")
		fresh := func() *apihistory.Fold {
			if fp {
				return apihistory.NewFingerprinted(opts, func(s string) uint64 { return uint64(len(s)) }, 2)
			}
			return apihistory.New(opts)
		}
		k := rapid.IntRange(0, len(evs)).Draw(t, "split")
		f := fresh()
		for _, e := range evs[:k] {
			_ = f.Add(e)
		}
		c := f.Clone()
		for _, e := range evs[k:] {
			_ = f.Add(e)
		}
		for _, e := range other {
			_ = c.Add(e)
		}
		for _, w := range []struct {
			name string
			got  *apihistory.Fold
			evs  []events.Event
		}{{"fold", f, evs}, {"clone", c, append(append([]events.Event{}, evs[:k]...), other...)}} {
			want := fresh()
			for _, e := range w.evs {
				_ = want.Add(e)
			}
			if d := cmp.Diff(want.Result(), w.got.Result()); d != "" {
				t.Fatalf("%s after a clone at %d:\n%s", w.name, k, d)
			}
			if want.Exact() != w.got.Exact() {
				t.Fatalf("%s: Exact %v, want %v", w.name, w.got.Exact(), want.Exact())
			}
		}
	})
}
