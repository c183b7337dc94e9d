package tailproof

import (
	"context"
	"errors"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// Cuts answers, in one pass over a session's evidence, what a dry-run
// Reconcile would decide on every cut a crash could leave (replay
// --crash-at all; ADR 0035). Feed the ledger's records and the
// transcript's records in crash order; Decide returns the Result and error
// Reconcile(…, Options{DryRun: true, …}) returns on the files as they stand,
// with each proven terminal stamped now.
//
// The caller vouches for the shape of what it feeds: ledger records that
// each decoded from one line (no malformed line in the cut), and a
// transcript whose active chain, at every cut, is every record so far in
// file order (one linear chain, ADR 0020) — or, where it rewinds or
// branches, whose chain the caller takes back with Restore and feeds again
// from the mark (ADR 0035, 2026-12-01 night). Decide returns false when a
// decision would need a fold this single pass does not hold and cannot
// rebuild (see reconcile.Cuts); that cut must be decided by Reconcile on
// its bytes.
type Cuts struct {
	cuts  *reconcile.Cuts
	opts  Options
	rules Rules
}

// ErrCutsNeedDryRun is NewCuts' refusal of options that would append.
var ErrCutsNeedDryRun = errors.New("tailproof: Cuts decides dry runs only")

// NewCuts starts a session with no evidence. opts.Now is not read (Decide
// takes the clock); opts must be a dry run.
func NewCuts(opts Options) (*Cuts, error) {
	if !opts.DryRun {
		return nil, ErrCutsNeedDryRun
	}
	rules := opts.rules()
	return &Cuts{cuts: reconcile.NewCuts(reconcile.Input{Rules: rules, NoTrace: opts.NoTrace}), opts: opts, rules: rules}, nil
}

// AddLedger folds the next ledger record; size is its line's length with
// its newline.
func (c *Cuts) AddLedger(rec ledger.Record, size int) {
	c.cuts.AddLedger(rec, size)
}

// AddChainEvent folds the next transcript record.
func (c *Cuts) AddChainEvent(e events.Event) error { return c.cuts.AddChainEvent(e) }

// SetRewalk gives the pass a way to read the chain so far again (the first
// n records, in order), for a prompt whose attribution fold cannot be
// forked from the target-free one (reconcile.Rewalk); without it such cuts
// are left to Reconcile.
func (c *Cuts) SetRewalk(r func(n int, yield func(events.Event) error) error) { c.cuts.SetRewalk(r) }

// ChainLen is the number of transcript records folded.
func (c *Cuts) ChainLen() int { return c.cuts.ChainLen() }

// ChainMark is a copy of what a Cuts holds about the active chain so far
// (reconcile.ChainMark).
type ChainMark = reconcile.ChainMark

// Mark copies what the pass holds about the active chain so far.
func (c *Cuts) Mark() *ChainMark { return c.cuts.Mark() }

// SetMarkWalk lets the pass fork a prompt's fold from a mark taken
// earlier on the active chain instead of reading the chain from its first
// record (reconcile.MarkWalk): the deepest mark first, try says whether it
// will do, then the records after it, up to the chain's first n.
func (c *Cuts) SetMarkWalk(w func(n int, try func(m *ChainMark) bool, yield func(events.Event) error) error) {
	c.cuts.SetMarkWalk(w)
}

// Restore takes the active chain back to a mark taken earlier in this pass
// (its first m.Len() records): a transcript that rewinds or branches
// continues its active chain from an earlier record. Feed the records
// between the mark and the record the chain now continues from again, then
// the new one. The ledger fed so far stays.
func (c *Cuts) Restore(m *ChainMark) { c.cuts.Restore(m) }

// Decide is Reconcile's dry run on the cut so far, the clock reading now;
// chain is the transcript's chain as qwen.LoadChain would index the cut.
// ok is false when this cut must be decided from its bytes.
func (c *Cuts) Decide(ctx context.Context, chain *qwen.Chain, now int64) (res Result, ok bool, err error) {
	core, ok := c.cuts.Core(chain)
	if !ok {
		return Result{}, false, nil
	}
	res = Result{DryRun: true, Rules: c.rules.Name, Dangling: core.Dangling()}
	rd := core.Ready()
	if rd.NeedFence {
		rd = core.Commit(rd.LedgerSize, nil)
	}
	res.Decisions = rd.Decisions
	res.Trace = append(res.Trace, rd.Trace...)
	opts := c.opts
	opts.Now = func() int64 { return now }
	err = appendTerminals(ctx, nil, "", opts, core, res.Decisions)
	for _, d := range res.Decisions {
		res.Trace = append(res.Trace, d.Trace...)
	}
	return res, true, err
}
