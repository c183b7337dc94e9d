package guards

import "fmt"

// Temporal requires a last visible write (non-system provenance, with a
// message) with a valid clock, strictly after the target's admission
// (reference V9/V10). Equality vetoes: both clocks are millisecond reads, so a
// write in the admission millisecond cannot be attributed. It applies even
// with a marker, as in the reference; identified turns (Ownership) skip it.
var Temporal Guard[*Evidence] = Func("temporal", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || identified(e) {
		return ""
	}
	if !t.HasLastVisible {
		return "no visible write with a valid timestamp"
	}
	if float64(t.LastVisibleMs) <= e.Admission.AtFloat() {
		return fmt.Sprintf("last visible write (%d) is not after admission (%d)", t.LastVisibleMs, e.Admission.At)
	}
	return ""
})
