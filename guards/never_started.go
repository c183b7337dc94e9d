package guards

// NeverStarted guards the not-dispatched route (ADR 0003 §2e): no user-role
// record after the target's own marker decides interrupted only when the
// rest of never-started evidence holds too (TranscriptEvidence.NeverStarted,
// ADR 0023 part B; 2026-12-01). Qwen Code 0.24.4 writes no user record for a
// retry or continue prompt's turn (#executePromptInner: only its
// file_history_snapshot, telemetry and answer) nor for a goal-runtime
// prompt's (a goal-runtime message), and answers a local slash command
// without one: what follows the marker may then be the target's own turn,
// which may have completed. Strictly narrower than the route alone, so it
// only turns interrupted stamps into unknowns.
var NeverStarted Guard[*Evidence] = Func("never-started", func(e *Evidence) string {
	t := e.Transcript
	if !e.Classification.FromNotDispatched || t.NeverStarted {
		return ""
	}
	why := t.NeverStartedBlock
	if why == "" {
		why = "its conditions were not checked"
	}
	return "no prompt record after admission marker " + t.MarkerUUID + ", but the target's turn is not proven never started: " + why
})
