package turnrules

import (
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// PromptRecorded allows when the turn holds at least one prompt of a
// person. A turn opened by a notification or the scheduler has nothing a
// resume should send; one whose prompt was never written (a crash between
// Codex's task_started and its user_message) has nothing it can.
var PromptRecorded guards.Guard[*turnfold.Evidence] = guards.Func("prompt-recorded", func(e *turnfold.Evidence) string {
	for _, p := range e.Turn.Prompts {
		if p.Source.Resendable() {
			return ""
		}
	}
	if len(e.Turn.Prompts) == 0 {
		return "the turn has no recorded prompt"
	}
	return "no prompt of the turn is a person's (first: " + e.Turn.Prompts[0].Source.String() + ")"
})

// ProvenanceCarried allows when every prompt a resume would send carries its
// provenance in a field or by its record type. Content-shape guesses (older
// Claude Code records without origin/promptSource) may classify a turn, but a
// resume must not send them on a guess.
var ProvenanceCarried guards.Guard[*turnfold.Evidence] = guards.Func("provenance-carried", func(e *turnfold.Evidence) string {
	var guessed []string
	for _, p := range e.Turn.Prompts {
		if p.Source.Resendable() && p.Origin == events.OriginGuessed {
			guessed = append(guessed, p.Pos.String())
		}
	}
	if len(guessed) == 0 {
		return ""
	}
	return "a person's prompt inferred from content, not carried by a field, at " + strings.Join(guessed, "; ")
})

// PromptsIntact allows unless a line that did not decode lies in the gap
// just before the turn: it may have been a prompt the person sent, and a
// resume that sends the rest would send part of what the person asked.
// (Damage inside the turn leaves it unknown, so it never gets this far.)
var PromptsIntact guards.Guard[*turnfold.Evidence] = guards.Func("prompts-intact", func(e *turnfold.Evidence) string {
	if len(e.Turn.DamageBefore) == 0 {
		return ""
	}
	return "undecodable line(s) just before the turn at " + positions(e.Turn.DamageBefore) + " may have held a prompt"
})
