package turnrules

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// NoTrailingError allows unless an error was recorded after the turn's last
// progress: the turn may have ended by that error even if an end record
// follows (whether Codex writes task_complete after an error turn was not
// verified), and a retry notice with nothing after it is a turn that never
// got its retry.
var NoTrailingError guards.Guard[*turnfold.Evidence] = guards.Func("no-trailing-error", func(e *turnfold.Evidence) string {
	t := e.Turn
	if !t.TrailingError {
		return ""
	}
	if t.TrailingRetry {
		return "a retry notice is the turn's last record before its end" + reasonSuffix(t.ErrorReason)
	}
	return "an error follows the turn's last progress" + reasonSuffix(t.ErrorReason)
})
