package ledgerview

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events/ledger"
)

func fold(recs ...ledger.Record) *View {
	v := New()
	for _, r := range recs {
		v.Add(r)
	}
	return v
}

func IF(p string, at int64) ledger.Record { return ledger.InFlight(p, at, "") }
func TC(p string, at int64) ledger.Record { return ledger.Terminal(p, ledger.Completed, "", "", at) }
func TX(p string, s ledger.TerminalState, code string, at int64) ledger.Record {
	return ledger.Terminal(p, s, code, "", at)
}

// Reference prompt-ledger.test.ts cases 12–16.
func TestReferenceDanglingAndRecent(t *testing.T) {
	if d := cmp.Diff([]string{"p2", "p3"}, fold(IF("p1", 1), IF("p2", 2), TC("p1", 3), IF("p3", 4)).Dangling()); d != "" {
		t.Error("case 12", d)
	}
	if d := cmp.Diff([]string{"first"}, fold(IF("later", 2), IF("first", 1), TX("later", ledger.Error, "x", 3)).Dangling()); d != "" {
		t.Error("case 13", d)
	}
	if got := New().Dangling(); len(got) != 0 {
		t.Error("case 14", got)
	}
	var got []string
	for _, r := range fold(IF("p1", 1), TC("p1", 2), IF("p2", 3), TX("p2", ledger.Interrupted, "daemon_lost", 4)).RecentTerminals() {
		got = append(got, r.PromptID)
	}
	if d := cmp.Diff([]string{"p1", "p2"}, got); d != "" {
		t.Error("case 15", d)
	}
	v := New()
	for i := range 70 {
		p := fmt.Sprintf("p%d", i)
		v.Add(IF(p, int64(2*i)))
		v.Add(TC(p, int64(2*i+1)))
	}
	rt := v.RecentTerminals()
	if len(rt) != 64 || rt[0].PromptID != "p6" || rt[63].PromptID != "p69" {
		t.Errorf("case 16: %d terminals, first %s, last %s", len(rt), rt[0].PromptID, rt[len(rt)-1].PromptID)
	}
}

func TestLatestUnsettledAdmissionSkipsSettled(t *testing.T) {
	a, ok := fold(IF("A", 1), IF("B", 2), TX("B", ledger.Cancelled, "", 3)).LatestUnsettledAdmission()
	if !ok || a.PromptID != "A" {
		t.Fatalf("got %v %v, want A", a.Describe(), ok)
	}
	// Re-admitted after its own terminal: the prompt is settled, nothing qualifies.
	if a, ok := fold(IF("p1", 1), TC("p1", 2), IF("p1", 3)).LatestUnsettledAdmission(); ok {
		t.Fatalf("got %v, want none", a.Describe())
	}
}

// Predecessors are the prompts that first appeared before the target, in
// ledger order — whatever their terminals' clocks say; later prompts (a
// queued one cancelled while the target ran) are not.
func TestLatestPredecessorTerminalAt(t *testing.T) {
	v := fold(IF("a", 1), IF("b", 2), ledger.Terminal("a", ledger.Completed, "", "", 50),
		IF("c", 3), ledger.Terminal("c", ledger.Cancelled, "", "", 90), ledger.Terminal("b", ledger.Error, "", "", 40))
	for _, c := range []struct {
		id   string
		want float64
		ok   bool
	}{{"a", 0, false}, {"b", 50, true}, {"c", 50, true}, {"missing", 0, false}} {
		got, ok := v.LatestPredecessorTerminalAt(c.id)
		if got != c.want || ok != c.ok {
			t.Errorf("LatestPredecessorTerminalAt(%s) = %v, %v; want %v, %v", c.id, got, ok, c.want, c.ok)
		}
	}
}

// Only completed predecessors count, the latest terminal winning.
func TestLatestCompletedPredecessor(t *testing.T) {
	v := fold(IF("a", 1), IF("b", 2), TC("a", 10), TX("b", ledger.Error, "prompt_deadline_exceeded", 30), IF("c", 3))
	adm, term, ok := v.LatestCompletedPredecessor("c")
	if !ok || adm != 1 || term != 10 {
		t.Fatalf("got %v %v %v, want a's admission at 1 and terminal at 10", adm, term, ok)
	}
	if _, _, ok := v.LatestCompletedPredecessor("a"); ok {
		t.Fatal("a has no predecessor")
	}
}
