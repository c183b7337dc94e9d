package guards

// BackgroundTurn vetoes when, after admission, a background execution class
// ran a turn of its own: a notification turn (Qwen Code 0.24.4 stamps every
// record of one with backgroundTurn; newer writers may mark its notification
// deliveredTurn instead), a cron prompt or a goal continuation. Such a turn
// writes model records that carry no prompt identity, so its tail looks
// exactly like the target's — the reference then stamps `completed` on a
// prompt an earlier crash had cut, or `interrupted` on one that had answered
// (the notification-turn shape of Qwen #12042, seen from the ledger side; ADR
// 0015). Only ownership evidence that the target's own turn started after the
// background turn attributes the tail to the target.
var BackgroundTurn Guard[*Evidence] = Func("background-turn", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || t.BackgroundIdx < 0 {
		return ""
	}
	if t.NotDispatched && !t.Ownership.Active {
		// Reconcile's not-started rule decides without reading the tail:
		// nothing but background records follows the target's marker, so
		// its turn never began, whoever wrote the tail.
		return ""
	}
	if o := t.Ownership; o.Active && o.TargetIdx > t.BackgroundIdx && o.FollowedBy == "" {
		return ""
	}
	if o := t.Ownership; o.TurnResult == "completed" || o.TargetIdx >= 0 && o.Checkpoint != "" {
		// Its own turn_result or branch_checkpoint decides; no tail is read.
		return ""
	}
	if o := t.Ownership; o.Active && o.TargetIdx < 0 && o.Absent {
		// The own-record-absent route reads no tail (ADR 0023 part B).
		return ""
	}
	return "a " + t.BackgroundKind + " started after admission (record " + t.BackgroundUUID + "); the tail may be its"
})
