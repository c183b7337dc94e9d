package turnrules

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// InterruptMarker allows when the turn holds an interrupt marker (Claude
// Code's "[Request interrupted by user]" records, with or without a
// following turn_duration; Codex's <turn_aborted> model-visible message).
var InterruptMarker guards.Guard[*turnfold.Evidence] = guards.Func("interrupt-marker", func(e *turnfold.Evidence) string {
	if len(e.Turn.Interrupts) > 0 {
		return ""
	}
	return "no interrupt marker in the turn"
})
