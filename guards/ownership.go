package guards

import "fmt"

// Ownership applies when the transcript carries daemon prompt identities
// (daemonPromptId on user records). It then attributes by identity, not by
// ordering or clocks: the target must have its own user record on the active
// chain, and nothing but its own turn may follow it — neither another
// prompt's user record nor a real-user record without identity (a ledger-less
// writer such as an interactive /resume). The target's own turn_result
// settles the question outright. Legacy transcripts (no identities) pass
// through to the reference's ordering rules.
var Ownership Guard[*Evidence] = Func("ownership", func(e *Evidence) string {
	o := e.Transcript.Ownership
	if !o.Active || o.TurnResult != "" || o.TargetIdx >= 0 && o.Checkpoint != "" {
		// The target's own turn_result names it: the settled-turn guard
		// judges outcomes other than completed (ADR 0026). Its own turn's
		// branch_checkpoint proves it returned end_turn, whatever follows.
		return ""
	}
	if o.TargetIdx < 0 && !o.Absent {
		return fmt.Sprintf("the transcript carries prompt identities but none for %s: its turn never reached the transcript (absence not proven: %s)", e.Target, o.AbsenceBlock)
	}
	if o.FollowedBy != "" {
		return fmt.Sprintf("%s's turn is followed by %s; its tail is not the transcript's tail", e.Target, o.FollowedBy)
	}
	return ""
})

// identified reports whether ownership evidence attributes the tail, which
// makes the ordering and clock guards unnecessary.
func identified(e *Evidence) bool {
	o := e.Transcript.Ownership
	if e.Transcript.Empty {
		return true // no record at all: nothing to attribute, the prompt wrote none
	}
	return o.Active && (o.TurnResult != "" || (o.TargetIdx >= 0 && (o.FollowedBy == "" || o.Checkpoint != "")) || (o.TargetIdx < 0 && o.Absent))
}
