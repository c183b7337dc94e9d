package apihistory_test

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
)

// hashes are the fingerprint functions the tests inject: every id on one
// fingerprint, a handful of fingerprints (most ids share one), and a real
// hash (collisions never, retirements only).
var hashes = map[string]func(string) uint64{
	"one":   func(string) uint64 { return 7 },
	"len%3": func(s string) uint64 { return uint64(len(s) % 3) },
	"fnv": func(s string) uint64 {
		h := uint64(14695981039346656037)
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
		return h
	},
}

// lockstep folds evs into an exact fold and a fingerprinted one side by
// side; at every record, while the fingerprinted fold says it is exact, its
// Result must equal the exact fold's. It returns whether the fingerprinted
// fold stayed exact to the end, and fails when an answer it vouched for
// differs — the property the façade's second walk rests on.
func lockstep(t interface {
	Fatalf(string, ...any)
}, evs []events.Event, keep int, hash func(string) uint64, recent int) bool {
	opts := apihistory.Options{Keep: keep}
	ex := apihistory.New(opts)
	fp := apihistory.NewFingerprinted(opts, hash, recent)
	for i, ev := range evs {
		if err := ex.Add(ev); err != nil {
			t.Fatalf("exact: %v", err)
		}
		if err := fp.Add(ev); err != nil {
			t.Fatalf("fingerprinted: %v", err)
		}
		got, want := fp.Result(), ex.Result()
		if !fp.Exact() {
			return false
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("after record %d the fingerprinted fold vouched for a different result (-exact +fingerprinted):\n%s", i, d)
		}
	}
	return true
}

var exactRuns, inexactRuns atomic.Int64

// TestFingerprintsNeverChangeAResult forces fingerprint collisions and
// retirements from the recent set on random sessions: an answer the
// fingerprinted fold vouches for is always the exact fold's; when it cannot
// vouch, Exact says so. Both outcomes must occur, or the test proves nothing.
func TestFingerprintsNeverChangeAResult(t *testing.T) {
	exactRuns.Store(0)
	inexactRuns.Store(0)
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		name := rapid.SampledFrom([]string{"one", "len%3", "fnv"}).Draw(t, "hash")
		recent := rapid.IntRange(1, 12).Draw(t, "recent")
		keep := rapid.IntRange(1, 5).Draw(t, "keep")
		if lockstep(t, evs, keep, hashes[name], recent) {
			exactRuns.Add(1)
		} else {
			inexactRuns.Add(1)
		}
	})
	if exactRuns.Load() == 0 || inexactRuns.Load() == 0 {
		t.Fatalf("exact runs %d, inexact runs %d: both must occur", exactRuns.Load(), inexactRuns.Load())
	}
}

// TestRewalkEqualsExact is the façade's contract end to end: fold with
// fingerprints, and when the fold is not exact fold again without them;
// the result is the exact fold's, whatever the hash.
func TestRewalkEqualsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		name := rapid.SampledFrom([]string{"one", "len%3", "fnv"}).Draw(t, "hash")
		fp := apihistory.NewFingerprinted(apihistory.Options{}, hashes[name], rapid.IntRange(1, 12).Draw(t, "recent"))
		for _, ev := range evs {
			_ = fp.Add(ev)
		}
		got := fp.Result()
		if !fp.Exact() {
			again := apihistory.New(apihistory.Options{})
			for _, ev := range evs {
				_ = again.Add(ev)
			}
			got = again.Result()
		}
		ex := apihistory.New(apihistory.Options{})
		for _, ev := range evs {
			_ = ex.Add(ev)
		}
		if d := cmp.Diff(ex.Result(), got); d != "" {
			t.Fatalf("-exact +rewalked:\n%s", d)
		}
	})
}

// TestFingerprintsRealHashLongSession: with the process's own hash and the
// default recent set, a long session of distinct ids stays exact (no second
// walk) and equals the exact fold.
func TestFingerprintsRealHashLongSession(t *testing.T) {
	evs := longSession(20000)
	ex := apihistory.New(apihistory.Options{})
	fp := apihistory.New(apihistory.Options{Fingerprints: true})
	for _, ev := range evs {
		_ = ex.Add(ev)
		_ = fp.Add(ev)
	}
	if !fp.Exact() {
		t.Fatal("a session of distinct ids needed a second walk")
	}
	if d := cmp.Diff(ex.Result(), fp.Result()); d != "" {
		t.Fatal(d)
	}
}

// FuzzFingerprints: on whatever the codec decodes, the fingerprinted fold
// under a colliding hash never vouches for a result the exact fold does not
// give.
func FuzzFingerprints(f *testing.F) {
	f.Add([]byte(`{"uuid":"u1","type":"user","provenance":"real_user","promptId":"p1","daemonPromptId":"d1","message":{"role":"user","parts":[{"text":"hi"}]}}
{"uuid":"s1","type":"system","subtype":"turn_attempt","promptId":"p1","daemonPromptId":"d1"}
{"uuid":"t1","type":"system","subtype":"turn_result","systemPayload":{"promptId":"d1","state":"cancelled","cancelledAt":5,"endedAt":6}}`), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, recent, keep uint8) {
		var evs []events.Event
		for ev, err := range events.Decode(bytes.NewReader(data), qwen.Codec{}, events.Options{}) {
			if err == nil {
				evs = append(evs, ev)
			}
		}
		for _, h := range hashes {
			lockstep(t, evs, int(keep%6)+1, h, int(recent%16)+1)
		}
	})
}

// TestFingerprintsKeepOldRoles pins the two roles the random sessions
// rarely retire: a prompt tag from a user record with an empty subtype (a
// tag without a prompt hint) and a prompt hint across a compression (which
// clears tags and tool ids, not hints). In both, the old occurrence makes
// the exact answer false; a fold that forgot it would vouch for true. (The
// last prompt's ids are pinned in the recent set, so a later prompt unpins
// p1 first.)
func TestFingerprintsKeepOldRoles(t *testing.T) {
	filler := ""
	for _, id := range []string{"f1", "f2", "f3", "f4", "f5", "f6"} {
		filler += "a" + id + " assistant prov=assistant_output : FC " + id + " x\n"
	}
	last := `u2 user prov=real_user prompt=p1 daemon=d2 : U again
t2 system/turn_result result=d2 state=cancelled cancelledAt=5 endedAt=6
`
	for name, head := range map[string]string{
		"tag without hint":        "u1 user/ prov=real_user prompt=p1 : U hi\n" + filler,
		"hint before compression": "u1 user prov=real_user prompt=p1 daemon=d1 : U hi\nu9 user prov=real_user prompt=p9 daemon=d9 : U unpin p1\n" + filler + "c1 system/chat_compression prov=system : U summary\n",
	} {
		t.Run(name, func(t *testing.T) {
			evs, err := histtest.ParseRecords(head + last)
			if err != nil {
				t.Fatal(err)
			}
			ex, _ := apihistory.Build(evs, apihistory.Options{})
			if ex.CancelledLastTurn {
				t.Fatal("the exact fold must not see the repeated prompt's turn as cancelled")
			}
			if lockstep(t, evs, 50, hashes["fnv"], 4) {
				t.Fatal("the prompt's old occurrence must make the fingerprinted fold inexact")
			}
		})
	}
}
