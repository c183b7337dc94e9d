package guards

// ClockMonotonic guards clock-based attribution, which is sound only while
// the clock moves forward. The predecessor fence compares a predecessor's
// terminal `at` with the transcript's write times in every mode, marker or
// not: when the ledger's `at` values step backward, a predecessor's answer can
// look newer than its own terminal and a prompt that never ran gets its tail.
// Without a marker, "after admission" is a clock comparison too, so a
// backward step of the transcript's timestamps refuses as well. Identified
// turns (Ownership) do not depend on clocks.
var ClockMonotonic Guard[*Evidence] = Func("clock-monotonic", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || identified(e) {
		return ""
	}
	switch {
	case e.LedgerClockStep != "":
		return "the ledger's clock stepped backward (" + e.LedgerClockStep + "); clocks cannot attribute the tail"
	case t.ClockStep != "" && t.MarkerUUID == "":
		return "the transcript's clock stepped backward (" + t.ClockStep + "); clocks cannot attribute the tail"
	}
	return ""
})
