package reconcile

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/interruption"
)

// Guards are the guards of each reconcile step. Classify guards every
// classification route.
type Guards struct {
	Select    guards.Guard[*guards.Evidence]
	Attribute guards.Guard[*guards.Evidence]
	Check     guards.Guard[*guards.Evidence]
	Classify  guards.Guard[*guards.Evidence]
	Commit    guards.Guard[*guards.Evidence]
}

// For returns the guard of event (nil when it has none).
func (g Guards) For(event Event) guards.Guard[*guards.Evidence] {
	switch event {
	case EvSelect:
		return g.Select
	case EvAttribute:
		return g.Attribute
	case EvCheck:
		return g.Check
	case EvOwnTurnResult, EvOwnSettledTurn, EvOwnCheckpoint, EvLocalCommand, EvNotDispatched, EvOwnRecordAbsent, EvTailComplete, EvTailInterrupted:
		return g.Classify
	case EvCommit:
		return g.Commit
	}
	return nil
}

// DanglingPolicy says which of several dangling prompts a reconciliation
// decides.
type DanglingPolicy uint8

const (
	// FirstOnly considers the first dangling prompt only; its select guard
	// (single-dangling) vetoes when several dangle. The reference's rule.
	FirstOnly DanglingPolicy = iota
	// TailOwner decides the prompt whose own prompt record is the active
	// chain's last identified one (or, without identities, the last-admitted
	// unsettled prompt); several-dangling then requires identity to prove
	// the choice.
	TailOwner
	// EachOwnEvidence decides every dangling prompt in one pass, each from
	// its own attribution fold over the one walk of the chain: the tail
	// owner as TailOwner does, every other one only by its own evidence
	// (guards.OwnEvidence: its own turn_result).
	EachOwnEvidence
)

// Rules is a complete rule set: the guards of every step and the evidence
// each reads. Tailproof and Qwen0244 are the two the project ships; every
// difference between them is a field here, not a condition elsewhere.
type Rules struct {
	// Name names the rule set in decisions ("tailproof", "qwen-0.24.4").
	Name   string
	Guards Guards
	// Identity reads prompt identities (daemonPromptId, turn_result) as
	// ownership evidence; without it the evidence is exactly the
	// reference's (attribution.Fold.ReferenceEvidence).
	Identity bool
	// Dangling says which dangling prompts are decided.
	Dangling DanglingPolicy
	// StrictChain counts undecodable committed lines and an inconsistent
	// chain as evidence (transcript-integrity reads them); without it they
	// are skipped as the reference's reader skips them.
	StrictChain bool
	// LocalCommandRoute and NotDispatchedRoute enable those classification
	// routes (EvLocalCommand, EvNotDispatched).
	LocalCommandRoute, NotDispatchedRoute bool
	// Trim is how trailing notifications are cut from the tail before it is
	// classified.
	Trim interruption.Mode
}

// Tailproof returns tailproof's rules; extra guards run at the evidence
// check, after the built-in ones.
func Tailproof(extra ...guards.Guard[*guards.Evidence]) Rules {
	check := []guards.Guard[*guards.Evidence]{
		guards.TranscriptIntegrity,
		guards.SeveralDangling,
		guards.Ownership,
		guards.CallIdentity,
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
	return Rules{
		Name: "tailproof",
		Guards: Guards{
			Select:    nil, // several dangling prompts are decided at the evidence check (SeveralDangling)
			Attribute: guards.Attribution,
			Check:     guards.All(append(check, extra...)...),
			Classify:  guards.All(guards.CompletionEvidence, guards.ShapeGuess, guards.OwnEvidence, guards.NeverStarted, guards.SettledTurn, guards.PermissionStop),
			Commit:    guards.Race,
		},
		Identity: true, Dangling: EachOwnEvidence, StrictChain: true,
		LocalCommandRoute: true, NotDispatchedRoute: true,
		Trim: interruption.Provenance,
	}
}

// Qwen0244 returns exactly the rules of Qwen Code 0.24.4's
// reconcileDanglingPromptTerminals, in its order: no ownership evidence, no
// background-turn or system-provenance guard, several dangling prompts vetoed
// outright, the notification trim by content shape only, undecodable lines
// skipped. Extra guards run at the evidence check.
func Qwen0244(extra ...guards.Guard[*guards.Evidence]) Rules {
	check := []guards.Guard[*guards.Evidence]{
		guards.TranscriptIntegrity, guards.DispatchMarker, guards.Deadline,
		guards.CompressionCheckpoint, guards.Temporal, guards.PredecessorFence,
	}
	return Rules{
		Name: "qwen-0.24.4",
		Guards: Guards{
			Select:    guards.SingleDangling,
			Attribute: guards.Attribution,
			Check:     guards.All(append(check, extra...)...),
			Classify:  guards.CompletionEvidence,
			Commit:    guards.Race,
		},
		Trim: interruption.ShapeOnly,
	}
}
