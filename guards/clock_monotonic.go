package guards

// ClockMonotonic guards clock-based attribution. Without a dispatch marker
// and without identity, "after admission" and the predecessor fence compare
// wall clocks, which is sound only while the clock moves forward. When the
// ledger's `at` values or the transcript's timestamps step backward, a
// predecessor's records can look newer than the target's admission or than
// its own terminal, and the reference then stamps a prompt that never ran.
var ClockMonotonic Guard[*Evidence] = Func("clock-monotonic", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || t.MarkerUUID != "" || identified(e) {
		return ""
	}
	switch {
	case e.LedgerClockStep != "":
		return "the ledger's clock stepped backward (" + e.LedgerClockStep + "); clocks cannot attribute the tail"
	case t.ClockStep != "":
		return "the transcript's clock stepped backward (" + t.ClockStep + "); clocks cannot attribute the tail"
	}
	return ""
})
