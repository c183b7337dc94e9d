package guards

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type ev struct{ a, b bool }

var (
	ga = Func("a", func(e ev) string {
		if !e.a {
			return "a is false"
		}
		return ""
	})
	gb = Func("b", func(e ev) string {
		if !e.b {
			return "b is false"
		}
		return ""
	})
)

func TestCombinatorsPrintCanonically(t *testing.T) {
	g := All(ga, Any(gb, Not(ga)))
	if got, want := g.String(), "all(a, any(b, not(a)))"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestAllCollectsEveryVeto(t *testing.T) {
	got := All(ga, gb).Check(ev{})
	want := []Veto{{Guard: "a", Reason: "a is false"}, {Guard: "b", Reason: "b is false"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
	if v := All(ga, gb).Check(ev{a: true, b: true}); v != nil {
		t.Fatalf("all allowed, got %v", v)
	}
}

func TestAnyAndNot(t *testing.T) {
	if v := Any(ga, gb).Check(ev{b: true}); v != nil {
		t.Fatalf("one alternative allows: %v", v)
	}
	if v := Any(ga, gb).Check(ev{}); len(v) != 2 {
		t.Fatalf("none allows: want both vetoes, got %v", v)
	}
	if v := Any[ev]().Check(ev{}); len(v) != 1 {
		t.Fatalf("empty any must refuse: %v", v)
	}
	v := Not(ga).Check(ev{a: true})
	if len(v) != 1 || v[0].Guard != "not(a)" || v[0].Reason != "a allowed" {
		t.Fatalf("not: %v", v)
	}
	if v := Not(ga).Check(ev{}); v != nil {
		t.Fatalf("not of a veto allows: %v", v)
	}
}

// Every reconcile guard names itself and stays silent on evidence it does
// not apply to, so a veto always comes from the rule it names.
func TestReconcileGuardsAllowNeutralEvidence(t *testing.T) {
	neutral := &Evidence{
		Dangling: []string{"p1"}, Target: "p1", HasAdmission: true,
		RefetchSize: 0,
	}
	neutral.Admission.PromptID = "p1"
	neutral.Transcript = TranscriptEvidence{Loaded: true, ChainLen: 2, MarkerIdx: -1, BackgroundIdx: -1,
		HasLastVisible: true, LastVisibleMs: 10, LastVisibleType: "assistant", VisibleAfter: 1, NonSystemAfter: 1}
	neutral.Transcript.Ownership.TargetIdx = -1
	for _, g := range []Guard[*Evidence]{SingleDangling, Attribution, TranscriptIntegrity, Ownership, DispatchMarker,
		Deadline, CompressionCheckpoint, SystemProvenance, BackgroundTurn, SeveralDangling, ShapeGuess, ClockMonotonic, Temporal, PredecessorFence, CompletionEvidence, Race, OwnEvidence, NeverStarted} {
		if g.Name() == "" || g.String() != g.Name() {
			t.Errorf("guard %q prints as %q", g.Name(), g.String())
		}
		if v := g.Check(neutral); v != nil {
			t.Errorf("%s vetoed neutral evidence: %v", g.Name(), v)
		}
	}
}

func TestMembersFlattensAll(t *testing.T) {
	names := func(gs []Guard[ev]) (out []string) {
		for _, g := range gs {
			out = append(out, g.Name())
		}
		return out
	}
	if d := cmp.Diff([]string{"a", "b", "any", "not(a)"}, names(Members(All(ga, All(gb, Any(ga, gb)), Not(ga))))); d != "" {
		t.Fatal(d)
	}
	if d := cmp.Diff([]string{"a"}, names(Members(ga))); d != "" {
		t.Fatal(d)
	}
	if Members[ev](nil) != nil {
		t.Fatal("nil guard has members")
	}
}

// Guards that read the transcript stay silent when it is unusable:
// transcript-integrity alone says why.
func TestTranscriptGuardsSilentWhenUnusable(t *testing.T) {
	e := &Evidence{Dangling: []string{"p1"}, Target: "p1", HasAdmission: true, HasOtherTerm: true, OtherTerminal: 5}
	e.Admission.PromptID = "p1"
	e.Transcript = TranscriptEvidence{LoadErr: "transcript missing", MarkerUUID: "m", MarkerIdx: -1, BackgroundIdx: 0, VisibleAfter: 3}
	e.Transcript.Ownership.TargetIdx = -1
	for _, g := range []Guard[*Evidence]{DispatchMarker, SystemProvenance, BackgroundTurn, Temporal, PredecessorFence} {
		if v := g.Check(e); v != nil {
			t.Errorf("%s vetoed an unusable transcript: %v", g.Name(), v)
		}
	}
	if v := TranscriptIntegrity.Check(e); len(v) != 1 {
		t.Fatalf("transcript-integrity: %v", v)
	}
}

// Only the tail owner is decided by the tail; another dangling prompt only
// by its own turn_result.
func TestOwnEvidence(t *testing.T) {
	for _, c := range []struct {
		target, owner string
		byTurnResult  bool
		veto          bool
	}{
		{"p2", "p1", false, true},
		{"p2", "p1", true, false},
		{"p1", "p1", false, false},
		{"p1", "", false, false},
	} {
		e := &Evidence{Target: c.target, TailOwner: c.owner, Classification: Classification{Done: true, Kind: "none", FromTurnResult: c.byTurnResult}}
		if got := OwnEvidence.Check(e) != nil; got != c.veto {
			t.Errorf("%+v: veto %v, want %v", c, got, c.veto)
		}
	}
}

// The not-dispatched route needs the whole of never-started evidence: no
// user-role record after the marker is not enough (a 0.24.4 retry, continue
// or goal-runtime turn writes none).
func TestNeverStarted(t *testing.T) {
	for _, c := range []struct {
		notDispatched, neverStarted bool
		veto                        bool
	}{
		{true, true, false},
		{true, false, true},
		{false, false, false},
	} {
		e := &Evidence{Target: "p1", Classification: Classification{Done: true, Kind: "not_started", Interrupted: c.notDispatched, FromNotDispatched: c.notDispatched}}
		e.Transcript.MarkerUUID, e.Transcript.NotDispatched, e.Transcript.NeverStarted = "m1", true, c.neverStarted
		if !c.neverStarted {
			e.Transcript.NeverStartedBlock = "file_history_snapshot f1 names a turn with no prompt record before it (a retry or continue prompt)"
		}
		v := NeverStarted.Check(e)
		if got := v != nil; got != c.veto {
			t.Errorf("%+v: veto %v, want %v", c, v, c.veto)
		}
		if v != nil && !strings.Contains(fmt.Sprint(v), "retry or continue") {
			t.Errorf("veto does not say why: %v", v)
		}
	}
}
