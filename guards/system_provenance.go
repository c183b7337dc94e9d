package guards

// SystemProvenance excludes system-provenance records (notifications, cron
// wake-ups, goal-runtime messages) from attribution: when the only visible
// writes after admission came from the host, nothing the target did is
// evidenced. The reference gets the same effect by skipping such records in
// its temporal pass; naming it as a guard makes the veto say why.
var SystemProvenance Guard[*Evidence] = Func("system-provenance", func(e *Evidence) string {
	t := e.Transcript
	if t.Loaded && t.VisibleAfter > 0 && t.NonSystemAfter == 0 && !identified(e) {
		return "every visible write after admission has system provenance"
	}
	return ""
})
