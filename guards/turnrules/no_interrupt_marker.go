package turnrules

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// NoInterruptMarker allows only when the turn holds no interrupt marker.
// Claude Code writes system/turn_duration after a user interrupt too (the
// "[Request interrupted by user…]" record comes first), so an end record
// after a marker is not a completion.
var NoInterruptMarker guards.Guard[*turnfold.Evidence] = guards.Func("no-interrupt-marker", func(e *turnfold.Evidence) string {
	if len(e.Turn.Interrupts) == 0 {
		return ""
	}
	m := e.Turn.Interrupts[0]
	return "interrupt marker at " + m.Pos.String() + reasonSuffix(m.Reason)
})
