package interruption_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
	"github.com/tailproof/tailproof/projections/interruption"
)

// Case 10 of the reference suite: the verdict is a copy.
func TestVerdictDoesNotAliasHistory(t *testing.T) {
	h, err := histtest.ParseEntries("M earlier answer\nU do the thing")
	if err != nil {
		t.Fatal(err)
	}
	h[1].Content.Parts[0].Raw = []byte(`{"text":"do the thing"}`)
	v := interruption.Detect(h, nil, nil)
	if v.Kind != interruption.KindInterruptedPrompt {
		t.Fatalf("kind %v", v.Kind)
	}
	v.Parts[0].Text = "mutated"
	v.Parts[0].Raw[2] = 'X'
	if h[1].Content.Parts[0].Text != "do the thing" || string(h[1].Content.Parts[0].Raw) != `{"text":"do the thing"}` {
		t.Fatalf("history changed: %+v", h[1].Content.Parts[0])
	}
}

// Classifying the bounded fold's tail gives exactly what classifying the
// whole history gives, in both modes: the bound never changes a verdict.
func TestBoundedTailClassifiesLikeFullHistory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		strip := rapid.Bool().Draw(t, "strip")
		full, err := apihistory.Build(evs, apihistory.Options{StripThoughts: strip})
		if err != nil {
			t.Fatal(err)
		}
		f := apihistory.New(apihistory.Options{StripThoughts: strip})
		for _, ev := range evs {
			if err := f.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
		got := f.Result()
		for _, mode := range []interruption.Mode{interruption.ShapeOnly, interruption.Provenance} {
			want := interruption.ClassifiableTail(full, mode)
			have := interruption.ClassifiableTail(got, mode)
			if d := cmp.Diff(want, have); d != "" {
				t.Fatalf("%v tail:\n%s", mode, d)
			}
			if d := cmp.Diff(interruption.Classify(want, full.CompletedToolCallIDs), interruption.Classify(have, got.CompletedToolCallIDs)); d != "" {
				t.Fatalf("%v verdict:\n%s", mode, d)
			}
		}
	})
}

// ShapeOnly ClassifiableTail + Classify is the reference daemon path:
// detectTurnInterruption(apiHistory.slice(max(0,end-50), end)) with end =
// effectiveHistoryEnd(apiHistory).
func TestShapeOnlyIsReferenceDaemonPath(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		full, err := apihistory.Build(histtest.Records(t), apihistory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		end := interruption.EffectiveHistoryEnd(full.Tail, nil)
		ref := interruption.Detect(full.Tail[max(0, end-interruption.TailCount):end], full.CompletedToolCallIDs, nil)
		got := interruption.Classify(interruption.ClassifiableTail(full, interruption.ShapeOnly), full.CompletedToolCallIDs)
		if d := cmp.Diff(ref, got); d != "" {
			t.Fatal(d)
		}
	})
}

// Provenance mode without legacy records agrees with the reference recovery
// plan's narrowing (effectiveHistoryEnd with the accumulator's count) on
// where the history ends.
func TestProvenanceTrimIsAuthoritativeCount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		full, err := apihistory.Build(histtest.Records(t), apihistory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tail := interruption.ClassifiableTail(full, interruption.Provenance)
		if tail.Guessed {
			return // a legacy or compressed entry was trimmed by shape: beyond the reference
		}
		n := full.TrailingSystemNotifications
		if end := interruption.EffectiveHistoryEnd(full.Tail, &n); end != full.Total-tail.Trimmed {
			t.Fatalf("reference end %d, tail ends at %d", end, full.Total-tail.Trimmed)
		}
	})
}

func TestSyntheticToolResponses(t *testing.T) {
	parts := interruption.SyntheticToolResponses([]interruption.Call{{ID: "a<b", Name: "x\"y"}}, "daemon_lost")
	want := `{"functionResponse":{"id":"a<b","name":"x\"y","response":{"error":"daemon_lost"}}}`
	if len(parts) != 1 || string(parts[0].Raw) != want || parts[0].ID != "a<b" || !parts[0].HasID {
		t.Fatalf("got %+v", parts)
	}
}
