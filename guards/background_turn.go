package guards

// BackgroundTurn vetoes when, after admission, a background execution class
// opened a turn of its own: a cron prompt, a delivered notification turn, or
// a goal continuation. Such a turn writes model records that carry no prompt
// identity, so a tail cut mid-stream looks exactly like the target's
// interrupted turn — the reference then stamps `interrupted` on a prompt that
// had completed (the notification-turn shape of Qwen #12042, seen from the
// ledger side). Only ownership evidence that the target's own turn started
// after the background turn attributes the tail to the target.
var BackgroundTurn Guard[*Evidence] = Func("background-turn", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || t.BackgroundIdx < 0 {
		return ""
	}
	if o := t.Ownership; o.Active && o.TargetIdx > t.BackgroundIdx && o.FollowedBy == "" {
		return ""
	}
	if t.Ownership.TurnResult == "completed" {
		return ""
	}
	return "a " + t.BackgroundKind + " started after admission (record " + t.BackgroundUUID + "); the tail may be its"
})
