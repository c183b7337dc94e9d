package reconcile_test

import (
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/machines/reconcile"
)

func decide(t *testing.T, rules reconcile.Rules, recs []ledger.Record, transcript string, fenceSize int64) reconcile.Ready {
	t.Helper()
	core := reconcile.New(reconcile.Input{Rules: rules})
	size := int64(0)
	for _, r := range recs {
		core.AddLedger(r)
		size += int64(len(ledger.Encode(r)) + 1)
	}
	core.EndLedger(len(recs), 0, size)
	if core.NeedsTranscript() {
		feed(core, transcript)
	}
	rd := core.Ready()
	if rd.NeedFence {
		if fenceSize < 0 {
			fenceSize = size
		}
		rd = core.Commit(fenceSize, nil)
	}
	return rd
}

// Nothing dangling: no transcript is asked for and no decision is made.
func TestNothingDanglingNeedsNoTranscript(t *testing.T) {
	core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
	core.AddLedger(ledger.InFlight("p1", 1, ""))
	core.AddLedger(ledger.Terminal("p1", ledger.Completed, "", "", 2))
	core.EndLedger(2, 0, 100)
	if core.NeedsTranscript() {
		t.Fatal("asked for the transcript with nothing dangling")
	}
	rd := core.Ready()
	if len(rd.Decisions) != 0 || rd.NeedFence || !strings.Contains(strings.Join(rd.Trace, "\n"), "nothing-dangling: loaded --> none") {
		t.Fatalf("ready %+v", rd)
	}
}

// The reference's rules veto several dangling prompts at select, from the
// ledger alone: the transcript is not needed.
func TestReferenceSeveralDanglingFromLedgerAlone(t *testing.T) {
	core := reconcile.New(reconcile.Input{Rules: reconcile.Qwen0244()})
	core.AddLedger(ledger.InFlight("p1", 1, ""))
	core.AddLedger(ledger.InFlight("p2", 2, ""))
	core.EndLedger(2, 0, 100)
	if core.NeedsTranscript() {
		t.Fatal("the reference's select guard refuses from the ledger; no transcript needed")
	}
	rd := core.Ready()
	if len(rd.Decisions) != 1 || rd.Decisions[0].Verdict != reconcile.VerdictUnknown || rd.Decisions[0].Vetoes[0].Guard != "single-dangling" {
		t.Fatalf("decisions %+v", rd.Decisions)
	}
}

// A ledger that grew between the read and the fence vetoes at commit: the
// race guard, and nothing to append.
func TestFenceChangeVetoesCommit(t *testing.T) {
	rd := decide(t, reconcile.Tailproof(), []ledger.Record{ledger.InFlight("p1", 1767225600500, "")}, answered, 999)
	d := rd.Decisions[0]
	if d.Verdict != reconcile.VerdictUnknown || d.Appended != nil || len(d.Vetoes) != 1 || d.Vetoes[0].Guard != "race" {
		t.Fatalf("decision %+v", d)
	}
}

// Feeding restarts: a walk begun, abandoned and begun again gives exactly
// the decision of one walk (the one-pass reader restarts when the chain is
// not linear).
func TestStartChainRestarts(t *testing.T) {
	want := decide(t, reconcile.Tailproof(), []ledger.Record{ledger.InFlight("p1", 1767225600500, "")}, answered, -1)
	core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
	rec := ledger.InFlight("p1", 1767225600500, "")
	core.AddLedger(rec)
	size := int64(len(ledger.Encode(rec)) + 1)
	core.EndLedger(1, 0, size)
	// A first, partial walk of a different chain...
	feedPartial(core, answered)
	// ...then the real one.
	feed(core, answered)
	got := core.Commit(size, nil)
	if got.Decisions[0].Verdict != want.Decisions[0].Verdict || strings.Join(got.Decisions[0].Trace, "\n") != strings.Join(want.Decisions[0].Trace, "\n") {
		t.Fatalf("restarted walk differs:\n%s\n---\n%s", strings.Join(got.Decisions[0].Trace, "\n"), strings.Join(want.Decisions[0].Trace, "\n"))
	}
}

// Every transition of the table is an edge of its diagram.
func TestDiagramListsEveryTransition(t *testing.T) {
	m := reconcile.Table.Mermaid()
	n := 0
	for _, tr := range reconcile.Table.Transitions {
		for _, src := range tr.Src {
			n++
			if !strings.Contains(m, "    "+src+" --> "+tr.Dst+": "+tr.Event+"\n") {
				t.Errorf("diagram lacks %s --%s--> %s", src, tr.Event, tr.Dst)
			}
		}
	}
	if got := strings.Count(m, " --> ") - 1; got != n {
		t.Errorf("diagram has %d edges, table %d", got, n)
	}
}

// Ready steps the machines once: asking again returns the same decisions,
// and Commit may be called without asking first.
func TestReadyIsIdempotent(t *testing.T) {
	mk := func() *reconcile.Core {
		core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
		core.AddLedger(ledger.InFlight("p1", 1767225600500, ""))
		core.EndLedger(1, 0, 60)
		feed(core, answered)
		return core
	}
	core := mk()
	a, b := core.Ready(), core.Ready()
	if len(a.Decisions) != 1 || strings.Join(a.Decisions[0].Trace, "\n") != strings.Join(b.Decisions[0].Trace, "\n") {
		t.Fatalf("Ready differs when asked twice:\n%v\n%v", a.Decisions, b.Decisions)
	}
	direct := mk().Commit(60, nil)
	viaReady := core.Commit(60, nil)
	if direct.Decisions[0].State != reconcile.Committed || viaReady.Decisions[0].State != reconcile.Committed {
		t.Fatalf("commit: %s / %s", direct.Decisions[0].State, viaReady.Decisions[0].State)
	}
}
