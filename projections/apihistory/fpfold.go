package apihistory

import (
	"strings"

	"github.com/tailproof/tailproof/events/qwen"
)

// This file is the fold's side of fingerprint mode (fpcounts.go): the same
// questions ids.go and cancelled.go ask of the exact maps, asked of the
// recent counts, with every answer that the old table cannot vouch for
// marking the fold inexact.

// Exact reports whether every answer the fold has given, and the one Result
// would give now, is known to equal the exact fold's. Always true without
// Options.Fingerprints. When false the caller must fold the same records
// again without fingerprints (the result may differ from the exact one).
func (f *Fold) Exact() bool {
	if f.fp == nil {
		return true
	}
	if !f.inexact {
		f.Result() // asks the final questions
	}
	return !f.inexact
}

// vouch notes an answer the recent counts cannot prove.
func (f *Fold) vouch(ok bool) {
	if !ok {
		f.inexact = true
	}
}

func (f *Fold) fpUnique(id string) bool {
	e := f.fp.peek(id)
	f.vouch(f.fp.sure(id, roleTool))
	return e.calls == 1 && e.results == 1
}

func (f *Fold) fpCount(p qwen.Part, sign int32) {
	e := f.fp.at(p.ID)
	if p.Kind == qwen.PartFunctionCall {
		e.calls += sign
	} else {
		e.results += sign
	}
}

func (f *Fold) fpTag(id string, sign int32) {
	f.fp.at(id).tags += sign
}

// fpPrompt, fpAttempt and fpOutcome are hint's fingerprint-mode halves.
func (f *Fold) fpPrompt(rec *qwen.Record, idx int) {
	if rec.PromptID != "" {
		e := f.fp.at(rec.PromptID)
		e.prompts++
		e.promptIdx = idx
		if e.promptDaemon != rec.DaemonPromptID {
			e.promptDaemon = strings.Clone(rec.DaemonPromptID)
		}
		f.fp.pin(0, rec.PromptID)
		f.fp.pin(1, rec.DaemonPromptID)
	}
	if rec.DaemonPromptID != "" {
		f.fp.at(rec.DaemonPromptID).daemons++
	}
}

func (f *Fold) fpAttempt(rec *qwen.Record) {
	if rec.DaemonPromptID != "" {
		f.fp.at(rec.DaemonPromptID).daemons++
		f.fp.pin(2, rec.DaemonPromptID)
	}
}

func (f *Fold) fpOutcome(t *qwen.TurnResult, idx int) {
	e := f.fp.at(t.PromptID)
	e.outcomes++
	e.outcomeIdx = idx
	e.cancelled = t.State == "cancelled" && t.HasCancelledAt
}

// fpCancelled is the end of cancelledLastTurn for the last prompt pid
// (not empty), asking the same questions in the same order.
func (f *Fold) fpCancelled(pid string) bool {
	p := f.fp.peek(pid)
	f.vouch(f.fp.sure(pid, roleTag))
	if p.tags != 1 {
		return false
	}
	f.vouch(f.fp.sure(pid, rolePrompt))
	if p.prompts != 1 {
		return false
	}
	ownerIdx, ownerPrompt, ownerDaemon := p.promptIdx, pid, p.promptDaemon
	if f.attempt.ok && f.attempt.idx > ownerIdx {
		ownerIdx, ownerPrompt, ownerDaemon = f.attempt.idx, f.attempt.promptID, f.attempt.daemon
	}
	if ownerPrompt != pid || ownerDaemon == "" {
		return false
	}
	d := f.fp.peek(ownerDaemon)
	f.vouch(f.fp.sure(ownerDaemon, roleDaemon))
	if d.daemons != 1 {
		return false
	}
	f.vouch(f.fp.sure(ownerDaemon, roleOutcome))
	return d.outcomes == 1 && d.outcomeIdx > ownerIdx && d.cancelled
}
