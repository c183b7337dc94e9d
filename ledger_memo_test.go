package tailproof

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// TestLedgerMemoExtends: a ledger that is the remembered one is fed from
// memory, one that extends it by whole lines decodes only the new lines,
// and one that changed, or extends a remembered ledger whose last line had
// no newline, is decoded from the start — every result the plain path's.
func TestLedgerMemoExtends(t *testing.T) {
	m := NewTranscriptMemo(2)
	store := memory.NewQwenStore()
	tp, _ := store.Layout().TranscriptPath(testSID, jsonl.Active)
	lp, _ := store.Layout().LedgerPath(testSID, jsonl.Active)
	transcript := memoRecord("u1", "null", "user") + memoRecord("a1", `"u1"`, "assistant")
	if err := store.Mem().WriteFile(tp, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	line := func(r ledger.Record) string { return string(ledger.Encode(r)) + "\n" }
	p1 := line(ledger.InFlight("p1", 1767225600500, ""))
	d1 := line(ledger.Terminal("p1", ledger.Completed, "", "end_turn", 1767225600900))
	p2 := line(ledger.InFlight("p2", 1767225601000, ""))
	opts := Options{Now: func() int64 { return 1767225700000 }, DryRun: true, Memo: m}
	for i, step := range []struct {
		ledger               string
		reads, hits, extends int
	}{
		{p1, 1, 0, 0},
		{p1, 2, 1, 0},
		{p1 + d1, 3, 1, 1},
		{p1 + d1 + "{not json\n" + p2, 4, 1, 2},
		{p1 + d1 + "{not json\n" + p2, 5, 2, 2},
		{p2, 6, 2, 2},                          // changed: from the start
		{p2 + p1[:10], 7, 2, 3},                // a torn last line
		{p2 + p1, 8, 2, 3},                     // extends a torn line: from the start
		{"", 9, 2, 3},                          // empty
		{p1, 10, 2, 4},                         // extends the empty ledger
		{"\n\n" + p1 + "   \n", 11, 2, 4},      // blank lines
		{"\n\n" + p1 + "   \n" + d1, 12, 2, 5}, // extends it
	} {
		if err := store.Mem().WriteFile(lp, []byte(step.ledger), 0o600); err != nil {
			t.Fatal(err)
		}
		got, gerr := Reconcile(context.Background(), store, testSID, opts)
		plain := opts
		plain.Memo = nil
		want, werr := Reconcile(context.Background(), store, testSID, plain)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("step %d: error %v, without the memo %v", i, gerr, werr)
		}
		if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			t.Fatalf("step %d: memo changed the result (-without +with):\n%s", i, diff)
		}
		l := &m.ledger
		if l.reads != step.reads || l.hits != step.hits || l.extends != step.extends {
			t.Fatalf("step %d: %d reads, %d hits, %d extends; want %d, %d, %d", i, l.reads, l.hits, l.extends, step.reads, step.hits, step.extends)
		}
	}
}
