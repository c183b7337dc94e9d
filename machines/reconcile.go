package machines

import (
	"github.com/tailproof/tailproof/guards"
)

// Reconcile machine states.
const (
	RLoaded          = "loaded"
	RTargetSelected  = "target-selected"
	RAttributed      = "attributed"
	REvidenceChecked = "evidence-checked"
	RClassified      = "classified"
	RCommitted       = "committed"
	RUnknown         = "unknown"
	RNone            = "none"
)

// Reconcile machine events.
const (
	EvSelect    = "select"
	EvNothing   = "nothing-dangling"
	EvAttribute = "attribute"
	EvCheck     = "check-evidence"
	EvClassify  = "classify"
	EvCommit    = "commit"
	EvGiveUp    = "give-up"
)

// ReconcileTable is the reconcile machine: one decision for one dangling
// prompt. Every forward step is guarded; a veto sends the machine to unknown,
// which appends nothing.
var ReconcileTable = Table{
	Name:    "reconcile",
	Initial: RLoaded,
	Transitions: []Transition{
		{Event: EvNothing, Src: []string{RLoaded}, Dst: RNone},
		{Event: EvSelect, Src: []string{RLoaded}, Dst: RTargetSelected},
		{Event: EvAttribute, Src: []string{RTargetSelected}, Dst: RAttributed},
		{Event: EvCheck, Src: []string{RAttributed}, Dst: REvidenceChecked},
		{Event: EvClassify, Src: []string{REvidenceChecked}, Dst: RClassified},
		{Event: EvCommit, Src: []string{RClassified}, Dst: RCommitted},
		{Event: EvGiveUp, Src: []string{RLoaded, RTargetSelected, RAttributed, REvidenceChecked, RClassified}, Dst: RUnknown},
	},
}

// ReconcileGuards are the guards of each reconcile step, in the order the
// reference checks them, so the first vetoing step matches the reference's
// first return.
type ReconcileGuards struct {
	Select    guards.Guard[*guards.Evidence]
	Attribute guards.Guard[*guards.Evidence]
	Check     guards.Guard[*guards.Evidence]
	Classify  guards.Guard[*guards.Evidence]
	Commit    guards.Guard[*guards.Evidence]
}

// DefaultReconcileGuards returns tailproof's guards; extra guards a harness
// supplies run at the evidence check, after the built-in ones.
func DefaultReconcileGuards(extra ...guards.Guard[*guards.Evidence]) ReconcileGuards {
	check := []guards.Guard[*guards.Evidence]{
		guards.TranscriptIntegrity,
		guards.SeveralDangling,
		guards.Ownership,
		guards.DispatchMarker,
		guards.DispatchEvidence,
		guards.ClockMonotonic,
		guards.Deadline,
		guards.CompressionCheckpoint,
		guards.SystemProvenance,
		guards.BackgroundTurn,
		guards.Temporal,
		guards.PredecessorFence,
	}
	return ReconcileGuards{
		Select:    nil, // several dangling prompts are decided at the evidence check (SeveralDangling)
		Attribute: guards.Attribution,
		Check:     guards.All(append(check, extra...)...),
		Classify:  guards.All(guards.CompletionEvidence, guards.ShapeGuess),
		Commit:    guards.Race,
	}
}

// For returns the guard of a reconcile event (nil when it has none).
func (g ReconcileGuards) For(event string) guards.Guard[*guards.Evidence] {
	switch event {
	case EvSelect:
		return g.Select
	case EvAttribute:
		return g.Attribute
	case EvCheck:
		return g.Check
	case EvClassify:
		return g.Classify
	case EvCommit:
		return g.Commit
	}
	return nil
}

// NewReconcile builds a reconcile machine with g.
func NewReconcile(g ReconcileGuards) *Machine[*guards.Evidence] {
	return New(ReconcileTable, g.For)
}

// ReferenceReconcileGuards returns exactly the rules of Qwen Code 0.24.4's
// reconcileDanglingPromptTerminals, in its order: no ownership evidence, no
// background-turn or system-provenance guard, several dangling prompts vetoed
// outright. Extra guards run at the evidence check.
func ReferenceReconcileGuards(extra ...guards.Guard[*guards.Evidence]) ReconcileGuards {
	check := []guards.Guard[*guards.Evidence]{
		guards.TranscriptIntegrity, guards.DispatchMarker, guards.Deadline,
		guards.CompressionCheckpoint, guards.Temporal, guards.PredecessorFence,
	}
	return ReconcileGuards{
		Select:    guards.SingleDangling,
		Attribute: guards.Attribution,
		Check:     guards.All(append(check, extra...)...),
		Classify:  guards.CompletionEvidence,
		Commit:    guards.Race,
	}
}
