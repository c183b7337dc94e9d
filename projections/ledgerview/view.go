// Package ledgerview folds prompt terminal ledger records into the view the
// reconciler and the load response read: the latest record per prompt (last
// write wins), the dangling prompts in admission order, the settled set, the
// recent terminals, and the deadline-exceeded terminals.
//
// It mirrors Qwen Code's danglingInFlightPromptIds (a Map keyed by promptId:
// an update keeps the key's first-insertion position, so dangling ids come
// out in first-appearance order), recentPromptTerminalRecords (the last 64
// terminals in file order) and the settled-set / latest-admission logic of
// reconcileDanglingPromptTerminals. Memory (New) is a compact fact per distinct
// prompt (about 60 bytes with its interned id) plus the records of the open prompts,
// never proportional to the number of records; a compact view (NewCompact) keeps
// that only for the recent and the open prompts and 8 bytes for each other one,
// and says (Exact) when it cannot prove an answer.
package ledgerview

import (
	"slices"
	"strings"

	"github.com/tailproof/tailproof/events/ledger"
)

// RecentTerminalsLimit is the reference's PROMPT_TERMINALS_RESPONSE_LIMIT.
const RecentTerminalsLimit = 64

// fact is what the view keeps of every prompt, settled or not: enough for
// the predecessor and other-terminal queries, never its records. A prompt's
// records are kept only while it is open (open).
type fact struct {
	maxTermAt float64 // latest terminal `at` (valid when hasTerminal)
	latestAt  float64 // the latest record's `at` (completed predecessor)
	admitAt   float64 // the last in_flight's `at` (valid when admitted)
	flags     uint8
	open      int32 // 1 + the prompt's index in View.open while it is open, else 0
}

const (
	hasTerminal     uint8 = 1 << iota // any terminal anywhere (settled)
	admitted                          // some in_flight record
	latestInFlight                    // the last write is in_flight (dangling)
	latestCompleted                   // the last write is a completed terminal
)

// open is a prompt whose latest record is in_flight: its last admission
// record, kept whole because the guards read it.
type open struct {
	id        string
	order     int
	lastAdmit int // record index of the admission
	admission ledger.Record
}

// topTerm is one prompt's latest terminal time, for LatestOtherTerminalAt.
type topTerm struct {
	order int
	at    float64
	ok    bool
}

// View is the folded ledger. The zero value is not ready; use New.
//
// Memory: an interned id and one 32-byte fact per distinct prompt, the
// records of the prompts that are open (latest in_flight), the last 64
// terminals and the deadline terminals. Every query but the two
// predecessor ones is O(open prompts); those two scan the facts once
// (they are asked once per candidate).
type View struct {
	index    ids    // prompt id -> first-appearance order, exact (ids.go); unused when compact
	facts    []fact // by order, from frontier on (frontier is 0 unless compact)
	frontier int
	c        *compact // nil: every prompt kept exactly (compact.go)
	// open holds the open prompts in no particular order, each found
	// through its fact (fact.open): a map by id cost an allocation for the
	// map and one per admission, and a hash of the id per record.
	open     []open
	count    int
	recent   []ledger.Record // ring of the last RecentTerminalsLimit terminals
	next     int
	full     bool
	deadline []ledger.Record
	// top1 is the prompt with the latest terminal, top2 the latest among
	// the others: a prompt's latest terminal time only grows, so the two
	// answer "latest terminal of any prompt but id" for every id.
	top1, top2 topTerm
}

// New returns an empty view.
func New() *View { return &View{index: newIDs()} }

// Add folds one record.
func (v *View) Add(r ledger.Record) {
	idx := v.count
	v.count++
	order, ok, retired := v.find(r.PromptID)
	if retired {
		// A retired prompt again, or a new one sharing its fingerprint:
		// folded as new, and the caller folds the ledger again exactly.
		v.c.unproven = true
	}
	if !ok {
		// Copied (arena or clone): the decoder's strings may share the
		// line's allocation, which a kept substring would pin.
		order = v.intern(r.PromptID)
	}
	p := v.factOf(order)
	p.latestAt = r.AtFloat()
	p.flags &^= latestInFlight | latestCompleted
	if r.InFlight {
		p.flags |= admitted | latestInFlight
		p.admitAt = r.AtFloat()
		if p.open == 0 {
			v.open = append(v.open, open{id: v.keptID(order, r.PromptID), order: order})
			p.open = int32(len(v.open))
		}
		o := &v.open[p.open-1]
		o.lastAdmit, o.admission = idx, r
		return
	}
	v.unopen(p)
	if r.Terminal == ledger.Completed {
		p.flags |= latestCompleted
	}
	if p.flags&hasTerminal == 0 || r.AtFloat() > p.maxTermAt {
		p.maxTermAt = r.AtFloat()
		v.raiseTop(order, p.maxTermAt)
	}
	p.flags |= hasTerminal
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
	v.closed(r.PromptID, order)
}

// unopen removes the prompt of fact p from the open ones: the last open
// prompt takes its place.
func (v *View) unopen(p *fact) {
	if p.open == 0 {
		return
	}
	i, last := int(p.open-1), len(v.open)-1
	if i != last {
		v.open[i] = v.open[last]
		v.factOf(v.open[i].order).open = int32(i + 1)
	}
	v.open[last] = open{}
	v.open = v.open[:last]
	p.open = 0
}

// keptID is a copy of id, prompt order's, that the view may keep: the
// compact view's interned one while the prompt is in its window (no second
// copy of the same bytes), else a fresh clone.
func (v *View) keptID(order int, id string) string {
	if v.c != nil && order >= v.frontier {
		if w := v.c.winIDs[order-v.frontier]; w == id {
			return w
		}
	}
	return strings.Clone(id)
}

// raiseTop records that prompt order's latest terminal time is now at.
func (v *View) raiseTop(order int, at float64) {
	t := topTerm{order: order, at: at, ok: true}
	switch {
	case v.top1.ok && v.top1.order == order:
		v.top1.at = at
	case !v.top1.ok || at > v.top1.at:
		if v.top1.ok {
			v.top2 = v.top1
		}
		v.top1 = t
	case v.top2.ok && v.top2.order == order:
		v.top2.at = at
	case !v.top2.ok || at > v.top2.at:
		v.top2 = t
	}
}

// Len is the number of records folded (the reconciler's snapshot length).
func (v *View) Len() int { return v.count }

// Dangling returns the prompts whose latest record is in_flight, in
// first-appearance (admission) order.
func (v *View) Dangling() []string {
	if len(v.open) == 0 {
		return nil
	}
	byOrder := slices.SortedFunc(slices.Values(v.open), func(a, b open) int { return a.order - b.order })
	out := make([]string, len(byOrder))
	for i, o := range byOrder {
		out[i] = o.id
	}
	return out
}

// Settled reports whether id has a terminal record anywhere in the ledger.
func (v *View) Settled(id string) bool {
	o, ok := v.lookup(id)
	return ok && v.factOf(o).flags&hasTerminal != 0
}

// lookup is find for a query: an id the compact view retired cannot be
// answered for, which makes the view unproven.
func (v *View) lookup(id string) (int, bool) {
	o, ok, retired := v.find(id)
	if retired {
		v.c.unproven = true
	}
	return o, ok
}

// LatestUnsettledAdmission is the last in_flight record, in file order, of a
// prompt that has no terminal anywhere — the record the attribution guard
// requires to be the target's own admission. Admissions of prompts that
// settled later are skipped: in [A if, B if, B cancelled] the tail belongs to A.
// A prompt with no terminal has only in_flight records, so it is open: the
// search is over the open prompts only.
func (v *View) LatestUnsettledAdmission() (ledger.Record, bool) {
	best, found := -1, ledger.Record{}
	for _, o := range v.open {
		if v.factOf(o.order).flags&hasTerminal == 0 && o.lastAdmit > best {
			best, found = o.lastAdmit, o.admission
		}
	}
	return found, best >= 0
}

// LatestOtherTerminalAt is the latest `at` of a terminal of any prompt other
// than id, and whether one exists.
func (v *View) LatestOtherTerminalAt(id string) (float64, bool) {
	o, ok := v.lookup(id)
	if !ok {
		o = -1
	}
	if v.top1.ok && v.top1.order != o {
		return v.top1.at, true
	}
	return v.top2.at, v.top2.ok
}

// LatestPredecessorTerminalAt is the latest `at` of a terminal of a prompt
// that first appeared in the ledger before id (a prompt admitted ahead of
// it), and whether one exists. Under FIFO admission id's turn cannot start
// before those terminals.
func (v *View) LatestPredecessorTerminalAt(id string) (float64, bool) {
	t, ok := v.lookup(id)
	if !ok {
		return 0, false
	}
	a := v.predecessors(t)
	return a.term, a.hasTerm
}

// LatestCompletedPredecessor finds, among the prompts that first appeared
// before id, the one whose latest record is a completed terminal with the
// latest `at` (the first in admission order on a tie), and returns the `at`
// of its last admission and of that terminal. ok is false when there is none.
func (v *View) LatestCompletedPredecessor(id string) (admissionAt, terminalAt float64, ok bool) {
	t, found := v.lookup(id)
	if !found {
		return 0, 0, false
	}
	a := v.predecessors(t)
	return a.cAdmit, a.cAt, a.hasC
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

// OpenAdmission is id's last in_flight record while id is open (its latest
// record is in_flight), whatever terminals came before it.
func (v *View) OpenAdmission(id string) (ledger.Record, bool) {
	order, ok, _ := v.find(id)
	if !ok {
		return ledger.Record{}, false
	}
	p := v.factOf(order)
	if p.open == 0 {
		return ledger.Record{}, false
	}
	return v.open[p.open-1].admission, true
}

// UnsettledAdmission is id's last in_flight record, when id has no terminal
// anywhere in the ledger.
func (v *View) UnsettledAdmission(id string) (ledger.Record, bool) {
	order, ok, _ := v.find(id)
	if !ok {
		return ledger.Record{}, false
	}
	p := v.factOf(order)
	if p.open == 0 || p.flags&hasTerminal != 0 {
		return ledger.Record{}, false
	}
	return v.open[p.open-1].admission, true
}
