package turnrules

import (
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// CompletionRecorded allows only when the harness wrote an end record that
// says the turn completed, or one that says only that it ended (Claude
// Code's turn_duration, which the other completion guards then qualify). A
// turn without one is never presumed completed: Codex versions whose policy
// did not persist task_complete leave every turn so, and Codex's own
// history builder defaults those to Completed — the wrong answer after a
// crash.
var CompletionRecorded guards.Guard[*turnfold.Evidence] = guards.Func("completion-recorded", func(e *turnfold.Evidence) string {
	t := e.Turn
	switch {
	case !t.HasEnd:
		return "no end record for this turn"
	case t.End == turn.EndCompleted || t.End == turn.EndUnstated:
		return ""
	}
	return "the harness recorded the turn as " + t.End.String() + reasonSuffix(t.EndReason)
})
