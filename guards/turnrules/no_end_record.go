package turnrules

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// NoEndRecord allows when the turn has no end record: only then may the
// shape of its durable tail decide it.
var NoEndRecord guards.Guard[*turnfold.Evidence] = guards.Func("no-end-record", func(e *turnfold.Evidence) string {
	if !e.Turn.HasEnd {
		return ""
	}
	return "the turn has an end record (" + e.Turn.End.String() + ")"
})
