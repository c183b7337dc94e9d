package turnrules

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// EndNamesTurn allows unless an end record inside the turn names a turn id
// that is neither this turn nor one already closed. Codex's own tracker
// (rollout turn_lifecycle.rs) then "finishes the current turn" anyway;
// tailproof does not guess which turn the record ended.
var EndNamesTurn guards.Guard[*turnfold.Evidence] = guards.Func("end-names-turn", func(e *turnfold.Evidence) string {
	if e.Turn.ForeignEnd == "" {
		return ""
	}
	return "an end record names turn " + e.Turn.ForeignEnd + ", not this turn (" + e.Turn.Key() + ")"
})
