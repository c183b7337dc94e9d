package turnrules

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// TurnOver allows when nothing more will be written to the turn: a later
// turn opened in the file, or the caller asserts the writer is gone. An open
// final turn of a live writer is still running — Codex's app-server marks a
// replayed in-progress turn interrupted only "unless the thread is actually
// active" (PR #14125), and so does tailproof.
var TurnOver guards.Guard[*turnfold.Evidence] = guards.Func("turn-over", func(e *turnfold.Evidence) string {
	if e.Over() {
		return ""
	}
	return "the turn is the file's last and the writer is not known to have stopped: it may still be running"
})
