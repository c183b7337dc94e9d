package tailproof_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// manyPrompts is a ledger of 5000 settled prompts (beyond the compact
// view's window) and then an admission of last, which dangles.
func manyPrompts(last string) []ledger.Record {
	var recs []ledger.Record
	for i := range 5000 {
		id := fmt.Sprintf("p%d", i)
		recs = append(recs, ledger.InFlight(id, 1767225600000+2*int64(i), ""), ledger.Terminal(id, ledger.Completed, "", "", 1767225600001+2*int64(i)))
	}
	return append(recs, ledger.InFlight(last, 1767225700000, ""))
}

// TestUnprovenLedgerIsFoldedAgain: a prompt admitted again after it left
// the compact ledger view's window makes the façade read the ledger a second
// time, and the decision is the exact core's, evidence and all — a prompt
// folded as new would have every earlier prompt as a predecessor (the test
// fails when Reconcile skips the second fold).
func TestUnprovenLedgerIsFoldedAgain(t *testing.T) {
	run := func(recs []ledger.Record) (tailproof.Result, int) {
		var b strings.Builder
		for _, r := range recs {
			b.Write(ledger.Encode(r))
			b.WriteByte('\n')
		}
		s := &countingStore{QwenStore: memory.NewQwenStore()}
		seed(t, s.QwenStore, b.String(), "")
		res, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return res, s.ledgerOpens
	}
	exact := func(recs []ledger.Record) reconcile.Decision {
		core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
		for _, r := range recs {
			core.AddLedger(r)
		}
		core.EndLedger(len(recs), 0, 0)
		if !core.LedgerExact() {
			t.Fatal("the exact core's ledger is unproven")
		}
		return core.Ready().Decisions[0]
	}
	reusedRecs, freshRecs := manyPrompts("p0"), manyPrompts("new")
	res, reused := run(reusedRecs)
	fres, fresh := run(freshRecs)
	if reused != fresh+1 {
		t.Fatalf("ledger opened %d times with p0 admitted again, %d with a new prompt: want one more", reused, fresh)
	}
	for _, c := range []struct {
		res  tailproof.Result
		want reconcile.Decision
	}{{res, exact(reusedRecs)}, {fres, exact(freshRecs)}} {
		if len(c.res.Decisions) != 1 {
			t.Fatalf("decisions %+v", c.res.Decisions)
		}
		got, want := c.res.Decisions[0], c.want
		ge, we := got.Evidence, want.Evidence
		if got.Target != want.Target || got.Verdict != want.Verdict || got.Route != want.Route ||
			ge.HasPredTerm != we.HasPredTerm || ge.PredecessorTerminal != we.PredecessorTerminal ||
			ge.HasOtherTerm != we.HasOtherTerm || ge.OtherTerminal != we.OtherTerminal || ge.Admission != we.Admission {
			t.Fatalf("decision %+v %+v, exact core %+v %+v", got, *ge, want, *we)
		}
	}
	if res.Decisions[0].Evidence.HasPredTerm {
		t.Fatal("p0 was given predecessors: it was folded as a new prompt")
	}
}
