package turnrules

import (
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// FinalAnswer applies when the end record does not say how the turn ended
// (EndUnstated): the last progress of the turn must then be a complete model
// message the model meant as its answer. An explicit completion
// (task_complete) needs no such check.
var FinalAnswer guards.Guard[*turnfold.Evidence] = guards.Func("final-answer", func(e *turnfold.Evidence) string {
	t := e.Turn
	if !t.HasEnd || t.End != turn.EndUnstated {
		return ""
	}
	if t.LastProgress != turn.KindOutput {
		return "the end record does not say how the turn ended and the last progress is a " + t.LastProgress.String() + ", not a model answer"
	}
	if t.LastStop != turn.StopFinal {
		return "the end record does not say how the turn ended and the last model message is " + t.LastStop.String() + ", not final"
	}
	return ""
})
