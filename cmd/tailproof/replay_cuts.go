package main

import (
	"bytes"
	"context"
	"io"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// crashPass decides the crash points of a Qwen session in one pass
// (tailproof.Cuts, ADR 0035) for as long as the transcript so far is one
// clean linear chain; the crash points after that are decided from their
// bytes, one reconcile each, as before.
type crashPass struct {
	s    *session
	cuts *tailproof.Cuts
	tpl  qwen.Chain // the clean prefix's chain: its first-record facts
	// linear is how many transcript events form the clean linear prefix.
	linear int
	taken  [2]int // events of each stream fed
	leaf   string // the last transcript record's uuid
	lsize  int64  // the ledger bytes fed
}

// newCrashPass returns nil when no crash point of s can be decided in one
// pass: a dsh log, a missing file, an undecodable line in either file, or a
// transcript whose first records already do not form a chain the index
// reads as it is.
func newCrashPass(s *session, reference bool) *crashPass {
	if s.dsh || s.v0 != nil || !s.exists[0] || !s.exists[1] || len(s.ev.Sources[0].Bad) > 0 || len(s.ev.Sources[1].Bad) > 0 {
		return nil
	}
	for _, e := range s.ev.Sources[0].Events {
		if _, ok := asLedger(e); !ok {
			return nil
		}
	}
	trans := s.ev.Sources[1]
	linear := linearPrefix(trans.Events)
	if linear == 0 {
		return nil
	}
	end := int64(len(trans.Data))
	if linear < len(trans.Events) {
		end = trans.Events[linear].Pos.Offset
	}
	data := trans.Data[:end]
	chain, err := qwen.LoadChain(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, qwen.LoadOptions{})
	if err != nil || chain.Len != linear || chain.Records != linear || chain.Objects != linear ||
		len(chain.Gaps) > 0 || len(chain.BadLines) > 0 || chain.Cycle != "" || chain.Degraded() != "" {
		return nil
	}
	cuts, err := tailproof.NewCuts(tailproof.Options{DryRun: true, Reference: reference, NoTrace: true})
	if err != nil {
		return nil
	}
	evs := trans.Events[:linear]
	cuts.SetRewalk(func(n int, yield func(events.Event) error) error {
		for _, e := range evs[:min(n, len(evs))] {
			if err := yield(e); err != nil {
				return err
			}
		}
		return nil
	})
	tpl := *chain
	tpl.Gaps, tpl.Diagnostics, tpl.BadLines = nil, nil, nil
	return &crashPass{s: s, cuts: cuts, tpl: tpl, linear: linear}
}

// linearPrefix counts the leading events that continue one linear chain
// (linearCheck).
func linearPrefix(evs []events.Event) int {
	var lin linearCheck
	for i, ev := range evs {
		if !lin.add(ev, i) {
			return i
		}
	}
	return len(evs)
}

// add feeds merged event e (the next one); false once the pass can decide
// no later crash point.
func (p *crashPass) add(e events.Event) bool {
	if e.Stream == events.StreamLedger {
		src := p.s.ev.Sources[0]
		p.taken[0]++
		end := int64(len(src.Data)) // where the cut's ledger ends (Evidence.Cut)
		if p.taken[0] < len(src.Events) {
			end = src.Events[p.taken[0]].Pos.Offset
		}
		rec, _ := asLedger(e)
		p.cuts.AddLedger(rec, int(end-p.lsize))
		p.lsize = end
		return true
	}
	p.taken[1]++
	if p.taken[1] > p.linear {
		return false
	}
	if rec, ok := e.Body.(*qwen.Record); ok {
		p.leaf = rec.UUID
	}
	return p.cuts.AddChainEvent(e) == nil
}

// decide is the dry-run reconcile of the cut so far; ok false when this
// cut must be decided from its bytes.
func (p *crashPass) decide(ctx context.Context, now int64) (tailproof.Result, bool, error) {
	m := p.taken[1]
	if m == 0 {
		return tailproof.Result{}, false, nil // an empty transcript: the index's own answer
	}
	chain := p.tpl
	chain.Len, chain.Records, chain.Objects, chain.LeafUUID = m, m, m, p.leaf
	return p.cuts.Decide(ctx, &chain, now)
}
