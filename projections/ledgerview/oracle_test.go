package ledgerview

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events/ledger"
)

// oracle answers every query from the whole record list, by its definition:
// the view must agree with it after every record, whatever the ledger.
type oracle []ledger.Record

func (o oracle) firstSeen() []string {
	var ids []string
	for _, r := range o {
		if !slices.Contains(ids, r.PromptID) {
			ids = append(ids, r.PromptID)
		}
	}
	return ids
}

func (o oracle) latest(id string) (ledger.Record, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].PromptID == id {
			return o[i], true
		}
	}
	return ledger.Record{}, false
}

func (o oracle) settled(id string) bool {
	return slices.ContainsFunc(o, func(r ledger.Record) bool { return r.PromptID == id && !r.InFlight })
}

// maxTerm is the reference's per-prompt latest terminal: the first
// terminal's at, raised by any later greater one.
func (o oracle) maxTerm(id string) (float64, bool) {
	var m float64
	ok := false
	for _, r := range o {
		if r.PromptID == id && !r.InFlight && (!ok || r.AtFloat() > m) {
			m, ok = r.AtFloat(), true
		}
	}
	return m, ok
}

func (o oracle) dangling() []string {
	var out []string
	for _, id := range o.firstSeen() {
		if l, _ := o.latest(id); l.InFlight {
			out = append(out, id)
		}
	}
	return out
}

func (o oracle) latestUnsettledAdmission() (ledger.Record, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].InFlight && !o.settled(o[i].PromptID) {
			return o[i], true
		}
	}
	return ledger.Record{}, false
}

func (o oracle) lastAdmission(id string) (ledger.Record, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].InFlight && o[i].PromptID == id {
			return o[i], true
		}
	}
	return ledger.Record{}, false
}

func (o oracle) maxOver(ids []string) (float64, bool) {
	var m float64
	ok := false
	for _, id := range ids {
		if t, has := o.maxTerm(id); has && (!ok || t > m) {
			m, ok = t, true
		}
	}
	return m, ok
}

func (o oracle) predecessors(id string) []string {
	ids := o.firstSeen()
	i := slices.Index(ids, id)
	if i < 0 {
		return nil
	}
	return ids[:i]
}

func (o oracle) completedPredecessor(id string) (float64, float64, bool) {
	var adm, term float64
	ok := false
	for _, p := range o.predecessors(id) {
		l, _ := o.latest(p)
		a, admitted := o.lastAdmission(p)
		if !admitted || l.InFlight || l.Terminal != ledger.Completed {
			continue
		}
		if !ok || l.AtFloat() > term {
			adm, term, ok = a.AtFloat(), l.AtFloat(), true
		}
	}
	return adm, term, ok
}

func TestViewAgreesWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := []string{"a", "b", "c", "d", "e"}
		states := []ledger.TerminalState{ledger.Completed, ledger.Cancelled, ledger.Interrupted, ledger.Error}
		n := rapid.IntRange(0, 40).Draw(t, "records")
		v := New()
		var o oracle
		for i := range n {
			id := rapid.SampledFrom(ids).Draw(t, fmt.Sprint("id", i))
			at := rapid.Int64Range(0, 20).Draw(t, fmt.Sprint("at", i))
			var r ledger.Record
			if rapid.Bool().Draw(t, fmt.Sprint("inflight", i)) {
				r = ledger.InFlight(id, at, rapid.SampledFrom([]string{"", "u1", "u2"}).Draw(t, fmt.Sprint("tail", i)))
			} else {
				code := rapid.SampledFrom([]string{"", ledger.CodePromptDeadlineExceeded}).Draw(t, fmt.Sprint("code", i))
				r = ledger.Terminal(id, rapid.SampledFrom(states).Draw(t, fmt.Sprint("state", i)), code, "", at)
			}
			v.Add(r)
			o = append(o, r)
			if got, want := v.Dangling(), o.dangling(); !slices.Equal(got, want) {
				t.Fatalf("after %d: Dangling %v, want %v", i, got, want)
			}
			ga, gok := v.LatestUnsettledAdmission()
			wa, wok := o.latestUnsettledAdmission()
			if gok != wok || ga != wa {
				t.Fatalf("after %d: LatestUnsettledAdmission %v %v, want %v %v", i, ga, gok, wa, wok)
			}
			for _, q := range append(ids, "zz") {
				if got, want := v.Settled(q), o.settled(q); got != want {
					t.Fatalf("after %d: Settled(%s) %v, want %v", i, q, got, want)
				}
				ua, uok := v.UnsettledAdmission(q)
				wa, wok := o.lastAdmission(q)
				wok = wok && !o.settled(q)
				if !wok {
					wa = ledger.Record{}
				}
				if uok != wok || ua != wa {
					t.Fatalf("after %d: UnsettledAdmission(%s) %v %v, want %v %v", i, q, ua, uok, wa, wok)
				}
				others := slices.DeleteFunc(o.firstSeen(), func(s string) bool { return s == q })
				gt, gok := v.LatestOtherTerminalAt(q)
				wt, wok2 := o.maxOver(others)
				if gok != wok2 || gt != wt {
					t.Fatalf("after %d: LatestOtherTerminalAt(%s) %v %v, want %v %v", i, q, gt, gok, wt, wok2)
				}
				pt, pok := v.LatestPredecessorTerminalAt(q)
				wpt, wpok := o.maxOver(o.predecessors(q))
				if pok != wpok || pt != wpt {
					t.Fatalf("after %d: LatestPredecessorTerminalAt(%s) %v %v, want %v %v", i, q, pt, pok, wpt, wpok)
				}
				a1, t1, ok1 := v.LatestCompletedPredecessor(q)
				a2, t2, ok2 := o.completedPredecessor(q)
				if ok1 != ok2 || a1 != a2 || t1 != t2 {
					t.Fatalf("after %d: LatestCompletedPredecessor(%s) %v %v %v, want %v %v %v", i, q, a1, t1, ok1, a2, t2, ok2)
				}
			}
		}
		var wantDeadline []ledger.Record
		for _, r := range o {
			if !r.InFlight && r.Code == ledger.CodePromptDeadlineExceeded {
				wantDeadline = append(wantDeadline, r)
			}
		}
		if got := v.DeadlineExceeded(); !slices.Equal(got, wantDeadline) {
			t.Fatalf("DeadlineExceeded %v, want %v", got, wantDeadline)
		}
	})
}
