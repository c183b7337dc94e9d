package simulations_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/dshlog/oracle"
	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/simulations"
)

var v0Modes = []struct {
	enc  v0.Encoding
	pack bool
}{{v0.Zstd, true}, {v0.Zstd, false}, {v0.Raw, true}, {v0.Raw, false}}

// The v0 model under crashes: acknowledged events survive, the recovered
// log is balanced, a second recovery is a no-op.
func TestDSHV0Model(t *testing.T) {
	profiles := simulations.Profiles()
	repaired, runs := 0, 0
	for seed := uint64(1); seed <= 120; seed++ {
		for _, m := range v0Modes {
			src := rand.New(rand.NewPCG(seed, uint64(m.enc)*2+map[bool]uint64{true: 1}[m.pack]))
			prof := &profiles[int(seed)%len(profiles)]
			res := simulations.RunDSHV0(src, prof, m.enc, m.pack)
			if len(res.Violations) > 0 {
				t.Fatalf("seed %d %v pack=%v: %v", seed, m.enc, m.pack, res.Violations)
			}
			runs++
			if res.Repaired {
				repaired++
			}
		}
	}
	if repaired == 0 || repaired == runs {
		t.Fatalf("%d of %d runs repaired: the crashes do not vary", repaired, runs)
	}
	t.Logf("%d crashed v0 logs recovered, %d needed repair", runs, repaired)
}

// TestDSHV0ModelIsPublished is the differential check that keeps the
// model in the published shapes: the package itself must load every log the
// model writes and read the same events, and must recover every random cut
// of it as tailproof does. Skips without the oracle.
func TestDSHV0ModelIsPublished(t *testing.T) {
	o := oracle.Start(t)
	profiles := simulations.Profiles()
	checked := 0
	for seed := uint64(1); seed <= 4; seed++ {
		for _, m := range v0Modes {
			src := rand.New(rand.NewPCG(seed, 99))
			root := t.TempDir()
			w, err := dshlog.NewV0Writer(vfs.OS, root, simulations.DSHV0Header(), m.enc)
			if err != nil {
				t.Fatal(err)
			}
			var want []any
			for _, b := range simulations.DSHV0Batches(src, &profiles[int(seed)%len(profiles)], m.pack) {
				if err := w.Append(b.Lines); err != nil {
					t.Fatal(err)
				}
			}
			data, _ := os.ReadFile(w.Path())
			ans, err := o.Load(root, m.enc.String(), "sim-dsh-session")
			if err != nil {
				t.Fatal(err)
			}
			if ans.Inspect.OK == nil || ans.Stored.OK.TornMarker != nil {
				t.Fatalf("seed %d %v: the package refuses the model's log: %s", seed, m.enc, ans.Inspect.Error)
			}
			f, _ := os.Open(w.Path())
			_, err = v0.Scan(f, m.enc, v0.Options{}, func(r v0.Record) error {
				var v any
				json.Unmarshal(r.AppendJSON(nil), &v)
				want = append(want, v)
				return nil
			})
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var got []any
			for _, e := range *ans.Inspect.OK {
				var v any
				json.Unmarshal(e, &v)
				got = append(got, v)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("seed %d %v: the package reads the model's log differently:\n%s", seed, m.enc, d)
			}
			// Random cuts: tailproof's recovery and the package's agree.
			r := rand.New(rand.NewPCG(seed, 7))
			for range 12 {
				n := r.IntN(len(data) + 1)
				checked++
				rootP, rootT := t.TempDir(), t.TempDir()
				rel, _ := filepath.Rel(root, w.Path())
				for _, rt := range []string{rootP, rootT} {
					os.MkdirAll(filepath.Dir(filepath.Join(rt, rel)), 0o700)
					os.WriteFile(filepath.Join(rt, rel), data[:n], 0o600)
				}
				ans, err := o.Load(rootP, m.enc.String(), "sim-dsh-session")
				if err != nil {
					t.Fatal(err)
				}
				rec, rerr := dshlog.RecoverV0(vfs.OS, filepath.Join(rootT, rel), v0.Options{})
				if (rerr != nil) != (ans.Inspect.Error != "") {
					t.Fatalf("seed %d %v cut %d: tailproof %v, package %q", seed, m.enc, n, rerr, ans.Inspect.Error)
				}
				if rerr == nil && int(rec.Plan.Events) != len(*ans.Inspect.OK) {
					t.Fatalf("seed %d %v cut %d: %d events, package %d", seed, m.enc, n, rec.Plan.Events, len(*ans.Inspect.OK))
				}
			}
		}
	}
	t.Logf("%d model logs and %d cuts agree with the published backend", 4*len(v0Modes), checked)
}
