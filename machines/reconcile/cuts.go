package reconcile

import (
	"slices"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/projections/ledgerview"
)

// Cuts decides a session at every cut of one pass over its evidence: feed
// ledger records and active-chain records in the order a crash could cut
// them (AddLedger, AddChainEvent, interleaved), and Core returns, at any
// point, a core holding exactly what a Core fed the ledger so far and then
// one walk of the chain so far would hold. Nothing is folded twice: the
// api history and the tail owner do not depend on the ledger, and a
// candidate's attribution fold, created when the ledger first makes it a
// candidate, is forked from a target-free fold of the chain so far
// (attribution.Neutral) and folded on from there (ADR 0035).
//
// When a fold cannot be forked (the chain so far names the candidate,
// holds its marker before its last record, or is stamped after its
// admission), it is folded from the chain's first record again through the
// caller's Rewalk; without one, Core returns false: that cut must be
// decided from its bytes.
// The chain fed must be the active chain of every cut (a linear
// transcript, ADR 0020); the caller checks that.
type Cuts struct {
	in      Input
	view    *ledgerview.View
	clock   clockStep
	records int
	size    int64

	acc            *apihistory.Fold
	lastIdentified string
	turnResults    map[string]string
	neutral        *attribution.Neutral

	dirty    bool      // the ledger changed since the candidates' folds were chosen
	folds    []cutFold // the current candidates' folds
	stale    bool      // some current candidate has no fold
	base     *Core     // a core fed the ledger so far (sync); each cut's core is a copy
	rewalk   Rewalk
	markWalk MarkWalk
}

type cutFold struct {
	key  foldKey
	fold *attribution.Fold
	hist *apihistory.Result // candidate.hist
}

// foldKey is everything a candidate's attribution fold is created from.
type foldKey struct {
	target, marker string
	at             float64
	watch          attribution.Watch
}

// NewCuts starts a session with no evidence.
func NewCuts(in Input) *Cuts {
	return &Cuts{in: in, view: ledgerview.New(), acc: apihistory.New(apihistory.Options{}),
		turnResults: map[string]string{}, neutral: attribution.NewNeutral(), dirty: true}
}

// AddLedger folds the next ledger record; size is its line's length with
// the newline (the fence counts the bytes read).
func (c *Cuts) AddLedger(rec ledger.Record, size int) {
	c.view.Add(rec)
	c.clock.add(rec)
	c.records++
	c.size += int64(size)
	c.dirty = true
}

// AddChainEvent folds the next record of the active chain, as
// Core.AddChainEvent does for every candidate of the ledger so far.
func (c *Cuts) AddChainEvent(e events.Event) error {
	c.sync()
	if rec, ok := e.Body.(*qwen.Record); ok {
		if id := attribution.PromptIdentity(rec); id != "" {
			c.lastIdentified = strings.Clone(id)
		}
		if rec.Type == qwen.TypeSystem && rec.TurnResult != nil {
			t := rec.TurnResult
			if old, ok := c.turnResults[t.PromptID]; !ok || old != t.State {
				c.turnResults[strings.Clone(t.PromptID)] = strings.Clone(t.State)
			}
		}
	}
	for i := range c.folds {
		if c.folds[i].fold != nil {
			c.foldOn(&c.folds[i], c.acc, e)
		}
	}
	c.neutral.Add(e)
	return c.acc.Add(e)
}

// ledgerCore is a Core fed the ledger so far (sharing the view: it must not
// outlive the next AddLedger).
func (c *Cuts) ledgerCore() *Core {
	core := &Core{in: c.in, view: c.view, clock: c.clock}
	core.EndLedger(c.records, 0, c.size)
	return core
}

// sync chooses the folds of the ledger's current candidates: a candidate
// whose fold was already running keeps it; a new one forks the neutral
// fold or, where that is refused, folds the chain so far again (Rewalk).
func (c *Cuts) sync() {
	if !c.dirty {
		return
	}
	c.dirty = false
	core := c.ledgerCore()
	c.base = core
	next := make([]cutFold, 0, len(core.cands))
	c.stale = false
	for _, cd := range core.cands {
		k := keyOf(cd)
		cf, kept := cutFold{key: k}, false
		for _, old := range c.folds {
			if old.key == k && old.fold != nil {
				cf, kept = old, true
				break
			}
		}
		if !kept {
			if f, ok := c.neutral.Fork(k.target, k.marker, k.at, k.watch); ok {
				cf.fold = f
			} else {
				cf = c.refold(k)
			}
		}
		if cf.fold == nil {
			c.stale = true
		}
		next = append(next, cf)
	}
	c.folds = next
}

// Rewalk, when set, feeds the first n records of the chain again, in
// order, to yield; Cuts calls it for a candidate whose fold cannot be
// forked, and its error (or a nil Rewalk) leaves that cut undecided.
type Rewalk func(n int, yield func(events.Event) error) error

// SetRewalk installs the rewalk (see Rewalk).
func (c *Cuts) SetRewalk(r Rewalk) { c.rewalk = r }

// refold folds the chain so far for key k from its first record, with the
// api history it needs for the candidate's turn end (Core.AddChainEvent's
// snapshot); a nil fold when it cannot.
func (c *Cuts) refold(k foldKey) cutFold {
	if cf, ok := c.refoldFromMark(k); ok {
		return cf
	}
	cf := cutFold{key: k}
	if c.rewalk == nil {
		return cf
	}
	f := attribution.New(k.target, k.marker, k.at)
	if k.watch.On {
		f.WatchPredecessor(k.watch.From, k.watch.To)
	}
	acc := apihistory.New(apihistory.Options{})
	n := c.neutral.Len()
	seen := 0
	cf.fold = f
	err := c.rewalk(n, func(e events.Event) error {
		seen++
		c.foldOn(&cf, acc, e)
		return acc.Add(e)
	})
	if err != nil || seen != n {
		return cutFold{key: k}
	}
	return cf
}

// cloneLedger copies a core that has been fed its ledger and nothing else:
// the copy shares the view (read only until the next AddLedger) and gets
// its own candidates, evidence and trace, so deciding it leaves c as it was.
func (c *Core) cloneLedger() *Core {
	cp := *c
	cp.trace = slices.Clone(c.trace)
	cp.danglingSet = nil
	cp.cands = make([]*candidate, len(c.cands))
	for i, cd := range c.cands {
		cc := *cd
		ev := *cd.ev
		ev.OtherDeadlines = slices.Clone(cd.ev.OtherDeadlines)
		cc.ev, cc.d.Evidence = &ev, &ev
		cp.cands[i] = &cc
	}
	return &cp
}

func keyOf(cd *candidate) foldKey {
	k := foldKey{target: cd.ev.Target, marker: cd.ev.Admission.TailUUID, at: cd.ev.Admission.AtFloat()}
	if cd.hasPred {
		k.watch = attribution.Watch{On: true, From: cd.pred.admission, To: cd.pred.terminal}
	}
	return k
}

// Core returns a core holding the ledger so far and, when it needs the
// transcript, one walk of the chain so far (chain: the cut's chain as the
// index would describe it), ready for Ready and Commit; false when some
// candidate's fold could not be forked. Each call returns a new core; the
// folds it reads are shared and only read.
func (c *Cuts) Core(chain *qwen.Chain) (*Core, bool) {
	c.sync()
	if c.stale {
		return nil, false
	}
	core := c.base.cloneLedger()
	if !core.NeedsTranscript() {
		return core, true
	}
	core.acc, core.lastIdentified, core.turnResults = c.acc, c.lastIdentified, c.turnResults
	for i, cd := range core.cands {
		cd.fold, cd.hist = c.folds[i].fold, c.folds[i].hist
	}
	core.EndChain(chain, nil)
	return core, true
}

// ChainLen is the number of chain records folded.
func (c *Cuts) ChainLen() int { return c.neutral.Len() }
