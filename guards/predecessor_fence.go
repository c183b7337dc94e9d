package guards

import "fmt"

// PredecessorFence requires the last visible write to be strictly after the
// latest terminal of any other prompt (reference V11). Under FIFO admission
// the target's turn starts only after every predecessor settled, so an older
// tail belongs to a predecessor. Identified turns (Ownership) skip it.
var PredecessorFence Guard[*Evidence] = Func("predecessor-fence", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || identified(e) || !e.HasOtherTerm {
		return ""
	}
	if float64(t.LastVisibleMs) <= e.OtherTerminal {
		return fmt.Sprintf("last visible write (%d) is not after another prompt's terminal (%s)", t.LastVisibleMs, fmtAt(e.OtherTerminal))
	}
	return ""
})

func fmtAt(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}
