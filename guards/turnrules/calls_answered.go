package turnrules

import (
	"strings"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// CallsAnswered allows only when every tool call of the turn has a result.
// A completed turn's calls are all answered: the model cannot finish while
// it waits for one (Codex inserts a synthetic "aborted" output for each
// unanswered call before its next request — normalize.rs — precisely
// because a call without output is an unfinished turn).
var CallsAnswered guards.Guard[*turnfold.Evidence] = guards.Func("calls-answered", func(e *turnfold.Evidence) string {
	d := e.Turn.Dangling()
	if len(d) == 0 {
		return ""
	}
	ids := make([]string, len(d))
	for i, c := range d {
		ids[i] = c.ID
	}
	return "tool call(s) without a result: " + strings.Join(ids, ", ")
})
