package guards

import "fmt"

// Attribution requires the last admission of a not-yet-settled prompt to be
// the target's own (reference V2). Admissions of prompts that settled later
// are skipped: in [A if, B if, B cancelled] the tail belongs to A although B's
// in_flight line is the later record. A prompt re-admitted after its own
// terminal is settled, so nothing qualifies and the guard vetoes.
var Attribution Guard[*Evidence] = Func("attribution", func(e *Evidence) string {
	if !e.HasAdmission {
		return fmt.Sprintf("no unsettled admission in the ledger (was %s re-admitted after its own terminal?)", e.Target)
	}
	if e.Admission.PromptID != e.Target {
		return fmt.Sprintf("the latest unsettled admission belongs to %s, not %s", e.Admission.PromptID, e.Target)
	}
	return ""
})
