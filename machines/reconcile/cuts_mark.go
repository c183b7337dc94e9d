package reconcile

import (
	"maps"

	"github.com/tailproof/tailproof/events"

	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/attribution"
)

// ChainMark is what a Cuts holds about the active chain after some of its
// records: the api history, the tail owner, the turn_results, the neutral
// fold and the candidates' folds. A session whose transcript rewinds or
// branches (its active chain is not the file) keeps marks at points of the
// chain and, when a record continues the chain from an earlier record,
// restores the nearest mark at or before that record and feeds the chain
// records after the mark again (ADR 0035, 2026-12-01 night).
type ChainMark struct {
	acc            *apihistory.Fold
	lastIdentified string
	turnResults    map[string]string
	neutral        *attribution.Neutral
	folds          []cutFold
}

// Mark copies the chain state so far; the copy is independent of c.
func (c *Cuts) Mark() *ChainMark {
	c.sync()
	m := &ChainMark{acc: c.acc.Clone(), lastIdentified: c.lastIdentified, turnResults: maps.Clone(c.turnResults),
		neutral: c.neutral.Clone(), folds: cloneFolds(c.folds)}
	return m
}

// Len is the number of chain records the mark holds.
func (m *ChainMark) Len() int { return m.neutral.Len() }

// Restore makes c's chain state a copy of m's (m stays as it is and can be
// restored again); the ledger state is c's own. A candidate whose fold m
// holds keeps it, any other forks the restored neutral fold (or is
// rewalked) at the next use, as after a ledger change.
func (c *Cuts) Restore(m *ChainMark) {
	c.acc, c.lastIdentified, c.turnResults = m.acc.Clone(), m.lastIdentified, maps.Clone(m.turnResults)
	c.neutral, c.folds = m.neutral.Clone(), cloneFolds(m.folds)
	c.dirty = true
}

func cloneFolds(fs []cutFold) []cutFold {
	out := make([]cutFold, len(fs))
	for i, f := range fs {
		out[i] = f // hist is a Result snapshot, only read
		if f.fold != nil {
			out[i].fold = f.fold.Clone()
		}
	}
	return out
}

// MarkWalk, when set, offers the marks taken on the active chain so far,
// the deepest first, to try until it returns true, and then feeds the
// chain's records after the chosen mark, up to its first n, to yield. A
// candidate whose fold cannot be forked from the neutral fold at the tip
// (its marker is on the chain, say, as after a rewind to it) is forked
// from the neutral fold of the deepest mark that allows it and folded on
// from there, instead of from the chain's first record (Rewalk).
type MarkWalk func(n int, try func(m *ChainMark) bool, yield func(events.Event) error) error

// SetMarkWalk installs the mark walk (see MarkWalk).
func (c *Cuts) SetMarkWalk(w MarkWalk) { c.markWalk = w }

// refoldFromMark is refold through the mark walk; ok false when there is
// none or no mark allows a fork.
func (c *Cuts) refoldFromMark(k foldKey) (cutFold, bool) {
	if c.markWalk == nil {
		return cutFold{}, false
	}
	cf := cutFold{key: k}
	var acc *apihistory.Fold
	n := c.neutral.Len()
	seen := 0
	err := c.markWalk(n, func(m *ChainMark) bool {
		f, ok := m.neutral.Fork(k.target, k.marker, k.at, k.watch)
		if !ok {
			return false
		}
		cf.fold, seen = f, m.Len()
		if c.in.Rules.Identity {
			acc = m.acc.Clone()
		}
		return true
	}, func(e events.Event) error {
		seen++
		c.foldOn(&cf, acc, e)
		if acc != nil {
			return acc.Add(e)
		}
		return nil
	})
	if err != nil || cf.fold == nil || seen != n {
		return cutFold{}, false
	}
	return cf, true
}

// foldOn folds e into cf's fold, snapshotting acc (the api history before
// e) when the fold's turn end moves, as Core.AddChainEvent does.
func (c *Cuts) foldOn(cf *cutFold, acc *apihistory.Fold, e events.Event) {
	before := cf.fold.TurnEndIdx()
	cf.fold.Add(e)
	if after := cf.fold.TurnEndIdx(); after != before && c.in.Rules.Identity {
		cf.hist = nil
		if after >= 0 {
			res := acc.Result()
			cf.hist = &res
		}
	}
}
