package turnrules

import (
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// Evidence is the guards' evidence type.
type Evidence = turnfold.Evidence

// Completed is every condition of a completed verdict (ADR 0019).
var Completed = guards.All(IntactSpan, SequenceUnbroken, EndNamesTurn, CompletionRecorded,
	NoInterruptMarker, CallsAnswered, FinalAnswer, NoTrailingError)

// Interrupted is every condition of an interrupted verdict (ADR 0019): the
// turn's evidence is intact, and the harness recorded an abort, or an
// interrupt marker is in the turn, or the turn is over without an end record
// and its durable tail stops mid-work.
var Interrupted = guards.All(IntactSpan, SequenceUnbroken, EndNamesTurn,
	guards.Any(AbortRecorded, InterruptMarker, guards.All(NoEndRecord, TurnOver, UnfinishedWork)))

// Resend is every condition under which a resume may send an interrupted
// turn's prompts on its own: a person's prompt is recorded, none is missing,
// and their provenance is carried, not guessed.
var Resend = guards.All(PromptRecorded, PromptsIntact, ProvenanceCarried)

func positions(ps []events.Position) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}
