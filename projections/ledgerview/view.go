// Package ledgerview folds prompt terminal ledger records into the view the
// reconciler and the load response read: the latest record per prompt (last
// write wins), the dangling prompts in admission order, the settled set, the
// recent terminals, and the deadline-exceeded terminals.
//
// It mirrors Qwen Code's danglingInFlightPromptIds (a Map keyed by promptId:
// an update keeps the key's first-insertion position, so dangling ids come
// out in first-appearance order), recentPromptTerminalRecords (the last 64
// terminals in file order) and the settled-set / latest-admission logic of
// reconcileDanglingPromptTerminals. Memory is proportional to the number of
// distinct prompts, never to the number of records.
package ledgerview

import (
	"github.com/tailproof/tailproof/events/ledger"
)

// RecentTerminalsLimit is the reference's PROMPT_TERMINALS_RESPONSE_LIMIT.
const RecentTerminalsLimit = 64

type promptState struct {
	order       int           // first-appearance position
	latest      ledger.Record // last write wins
	settled     bool          // any terminal record anywhere
	lastAdmit   int           // record index of this prompt's last in_flight, -1 if none
	admission   ledger.Record // that record
	maxTermAt   float64
	hasTerminal bool
}

// View is the folded ledger. The zero value is not ready; use New.
type View struct {
	prompts  map[string]*promptState
	order    []string
	count    int
	recent   []ledger.Record // ring of the last RecentTerminalsLimit terminals
	next     int
	full     bool
	deadline []ledger.Record
}

// New returns an empty view.
func New() *View { return &View{prompts: map[string]*promptState{}} }

// Add folds one record.
func (v *View) Add(r ledger.Record) {
	idx := v.count
	v.count++
	p := v.prompts[r.PromptID]
	if p == nil {
		p = &promptState{order: len(v.order), lastAdmit: -1}
		v.prompts[r.PromptID] = p
		v.order = append(v.order, r.PromptID)
	}
	p.latest = r
	if r.InFlight {
		p.lastAdmit, p.admission = idx, r
		return
	}
	if !p.hasTerminal || r.AtFloat() > p.maxTermAt {
		p.maxTermAt = r.AtFloat()
	}
	p.settled, p.hasTerminal = true, true
	if r.Code == ledger.CodePromptDeadlineExceeded {
		v.deadline = append(v.deadline, r)
	}
	if len(v.recent) < RecentTerminalsLimit {
		v.recent = append(v.recent, r)
	} else {
		v.recent[v.next] = r
		v.full = true
	}
	v.next = (v.next + 1) % RecentTerminalsLimit
}

// Len is the number of records folded (the reconciler's snapshot length).
func (v *View) Len() int { return v.count }

// Dangling returns the prompts whose latest record is in_flight, in
// first-appearance (admission) order.
func (v *View) Dangling() []string {
	var out []string
	for _, id := range v.order {
		if v.prompts[id].latest.InFlight {
			out = append(out, id)
		}
	}
	return out
}

// Settled reports whether id has a terminal record anywhere in the ledger.
func (v *View) Settled(id string) bool {
	p := v.prompts[id]
	return p != nil && p.settled
}

// Latest returns the last record written for id.
func (v *View) Latest(id string) (ledger.Record, bool) {
	p := v.prompts[id]
	if p == nil {
		return ledger.Record{}, false
	}
	return p.latest, true
}

// LatestUnsettledAdmission is the last in_flight record, in file order, of a
// prompt that has no terminal anywhere — the record the attribution guard
// requires to be the target's own admission. Admissions of prompts that
// settled later are skipped: in [A if, B if, B cancelled] the tail belongs to A.
func (v *View) LatestUnsettledAdmission() (ledger.Record, bool) {
	best, found := -1, ledger.Record{}
	for _, p := range v.prompts {
		if !p.settled && p.lastAdmit > best {
			best, found = p.lastAdmit, p.admission
		}
	}
	return found, best >= 0
}

// LatestOtherTerminalAt is the latest `at` of a terminal of any prompt other
// than id, and whether one exists.
func (v *View) LatestOtherTerminalAt(id string) (float64, bool) {
	var max float64
	ok := false
	for pid, p := range v.prompts {
		if pid == id || !p.hasTerminal {
			continue
		}
		if !ok || p.maxTermAt > max {
			max, ok = p.maxTermAt, true
		}
	}
	return max, ok
}

// LatestPredecessorTerminalAt is the latest `at` of a terminal of a prompt
// that first appeared in the ledger before id (a prompt admitted ahead of
// it), and whether one exists. Under FIFO admission id's turn cannot start
// before those terminals.
func (v *View) LatestPredecessorTerminalAt(id string) (float64, bool) {
	t := v.prompts[id]
	if t == nil {
		return 0, false
	}
	var max float64
	ok := false
	for _, pid := range v.order[:t.order] {
		p := v.prompts[pid]
		if !p.hasTerminal {
			continue
		}
		if !ok || p.maxTermAt > max {
			max, ok = p.maxTermAt, true
		}
	}
	return max, ok
}

// LatestCompletedPredecessor returns, among the prompts that first appeared
// before id, the one whose completed terminal is latest: its last admission
// and that terminal. ok is false when there is none.
func (v *View) LatestCompletedPredecessor(id string) (admission, terminal ledger.Record, ok bool) {
	t := v.prompts[id]
	if t == nil {
		return ledger.Record{}, ledger.Record{}, false
	}
	for _, pid := range v.order[:t.order] {
		p := v.prompts[pid]
		if p.lastAdmit < 0 || p.latest.InFlight || p.latest.Terminal != ledger.Completed {
			continue
		}
		if !ok || p.latest.AtFloat() > terminal.AtFloat() {
			admission, terminal, ok = p.admission, p.latest, true
		}
	}
	return admission, terminal, ok
}

// DeadlineExceeded returns the prompt_deadline_exceeded terminals in file order.
func (v *View) DeadlineExceeded() []ledger.Record { return v.deadline }

// RecentTerminals returns the last 64 terminals in file order.
func (v *View) RecentTerminals() []ledger.Record {
	if !v.full {
		return append([]ledger.Record(nil), v.recent...)
	}
	out := make([]ledger.Record, 0, RecentTerminalsLimit)
	out = append(out, v.recent[v.next:]...)
	return append(out, v.recent[:v.next]...)
}

// UnsettledAdmission is id's last in_flight record, when id has no terminal
// anywhere in the ledger.
func (v *View) UnsettledAdmission(id string) (ledger.Record, bool) {
	p := v.prompts[id]
	if p == nil || p.settled || p.lastAdmit < 0 {
		return ledger.Record{}, false
	}
	return p.admission, true
}
