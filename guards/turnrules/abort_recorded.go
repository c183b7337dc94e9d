package turnrules

import (
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// AbortRecorded allows when the harness's end record says the turn was
// aborted — interrupted, replaced, cancelled or failed (Codex turn_aborted
// with its reason). That record is the harness's own word; no liveness
// question arises.
var AbortRecorded guards.Guard[*turnfold.Evidence] = guards.Func("abort-recorded", func(e *turnfold.Evidence) string {
	t := e.Turn
	if t.HasEnd {
		switch t.End {
		case turn.EndInterrupted, turn.EndCancelled, turn.EndFailed:
			return ""
		}
		return "the end record says " + t.End.String()
	}
	return "no end record for this turn"
})
