package guards

// CompletionEvidence guards a completed stamp (reference V12): unless the tail
// is interrupted, the last visible non-system write must be an assistant turn
// or a tool result, or a local slash command must have completed after
// admission. A user-role tail without an answer never becomes "completed".
var CompletionEvidence Guard[*Evidence] = Func("completion-evidence", func(e *Evidence) string {
	v, t := e.Classification, e.Transcript
	if v.Interrupted || v.FromTurnResult || v.FromCheckpoint || v.FromLocalCommand || t.LocalCommandDone {
		return ""
	}
	if t.LastVisibleType == "assistant" || t.LastVisibleType == "tool_result" {
		return ""
	}
	if t.LastVisibleType == "" {
		return "no visible non-system write to evidence completion"
	}
	return "the last visible write is a " + t.LastVisibleType + " record, not an answer"
})
