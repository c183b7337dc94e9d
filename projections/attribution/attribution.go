// Package attribution folds the active transcript chain into the evidence
// the reconcile guards read for one target prompt: where its dispatch marker
// is and whether anything visible was written after it, the last visible
// write and its clock, a compression reset or a local slash command after
// admission, and — beyond the reference — ownership evidence from prompt
// identities carried on the records.
//
// It mirrors steps 5–6 of Qwen Code 0.24.4's reconcileDanglingPromptTerminals
// record for record: "visible" means not of type system, carrying a message,
// not a realtime_message; the last-visible pass additionally skips records
// whose provenance field is "system"; "after admission" is by chain position
// when the admission carries a tailUuid marker and by clock (>= at) otherwise.
// The fold is streaming: it keeps counters and the last few records, never
// the chain.
package attribution

import (
	"fmt"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// Fold accumulates evidence for one target. Create with New, feed every
// active-chain record in chain order with Add, then read Evidence.
type Fold struct {
	target    string
	marker    string
	at        float64
	idx       int
	ev        Evidence
	lastNS    *qwen.Record // last visible non-system-provenance record
	lastComp  int          // chain index of the last compression reset, -1 if none
	compUUID  string
	lastLocal int // chain index of the last local slash-command result, -1 if none
	// window: a completed predecessor's [admission, terminal] clock span,
	// watched for a prompt record (WatchPredecessor).
	window         bool
	winFrom, winTo float64
	// afterLocal counts visible non-system writes after lastLocal, whatever
	// the clock says (the positional twin of AfterLocalCommand).
	afterLocal int
	maxTs      int64
	maxTsUUID  string
	hasTs      bool
	// The last background-turn record (an opener, or any stamped record)
	// anywhere on the chain: under ownership
	// "after admission" is by position, and a clock that stepped back must not
	// hide a background turn that started after the target's own record.
	lastBg                 int
	lastBgUUID, lastBgKind string
	// bgStamped: the background turn in ev.BackgroundIdx is known by its
	// stamps, so where it ends is known too (see Add).
	bgStamped bool
	// userAfter: a user-role record after admission that could be a
	// prompt's — anything but a background turn's opener or a cold
	// notification (a plain prompt of any provenance, a mid-turn user
	// message, a realtime message...).
	userAfter bool
	// goalAfter: a goal-runtime message after admission. It opens a prompt
	// turn of the goal runtime (#executePromptInner writes it instead of a
	// user record, Qwen Code 0.24.4), which may be the target's, so it
	// defeats NeverStarted (not NotDispatched, ADR 0003 §2e).
	goalAfter bool
	// calls follows the target's turn by call identity (calls.go); saved
	// is the fold as it stood just before the record that ended that turn
	// (nil while the turn has not ended, or without call identity).
	calls calls
	saved *Fold
	// absence tracks what proves the target's turn absent (absence.go).
	absence absence
	// ck follows the target's own branch_checkpoint (checkpoint.go).
	ck checkpoint
}

// New starts a fold for target, admitted at `at` with dispatch marker
// markerUUID ("" when the admission carries none).
func New(target, markerUUID string, at float64) *Fold {
	f := &Fold{target: target, marker: markerUUID, at: at, lastComp: -1, lastLocal: -1, lastBg: -1, calls: calls{endIdx: -1}, absence: absence{lastPrompt: -1}}
	f.ev.MarkerUUID = markerUUID
	f.ev.MarkerIdx = -1
	f.ev.Ownership.TargetIdx = -1
	f.ev.BackgroundIdx = -1
	return f
}

// WatchPredecessor asks the fold whether some prompt record's clock falls in
// [from, to]: a completed predecessor's admission and terminal. Under a
// monotonic clock that predecessor's own user record is there
// (TranscriptEvidence.PredecessorShown).
func (f *Fold) WatchPredecessor(from, to float64) {
	f.window, f.winFrom, f.winTo = true, from, to
	f.ev.PredecessorWatched = true
}

func (f *Fold) after(i int, rec *qwen.Record) bool {
	if f.marker != "" {
		return f.ev.MarkerIdx >= 0 && i > f.ev.MarkerIdx
	}
	return rec.TimeOK && float64(rec.TimeMs) >= f.at
}

func visible(rec *qwen.Record) bool {
	return rec.Type != qwen.TypeSystem && rec.Message != nil && rec.Subtype != qwen.SubtypeRealtimeMessage
}

// Add folds the next chain record.
func (f *Fold) Add(ev events.Event) {
	rec, ok := ev.Body.(*qwen.Record)
	if !ok {
		return
	}
	i := f.idx
	switch f.calls.step(i, rec, f.target) {
	case callReset, callRevoke:
		f.saved = nil
	case callEnd:
		cp := *f
		cp.saved = nil
		f.saved = &cp
	}
	f.ck.add(f, rec)
	f.idx++
	f.ev.ChainLen = f.idx
	if f.marker != "" && f.ev.MarkerIdx < 0 && rec.UUID == f.marker {
		f.ev.MarkerIdx = i
	} else if f.ev.MarkerIdx >= 0 && i > f.ev.MarkerIdx && visible(rec) {
		f.ev.WroteAfter = true
	}
	f.ownership(i, rec, ev)
	f.absence.add(f, i, rec)
	f.clock(rec)
	isAfter := f.after(i, rec)
	if kind := BackgroundOpener(rec); kind != "" {
		f.lastBg, f.lastBgUUID, f.lastBgKind = i, rec.UUID, kind
	}
	if f.window && IsPromptRecord(rec) && rec.TimeOK && float64(rec.TimeMs) >= f.winFrom && float64(rec.TimeMs) <= f.winTo {
		f.ev.PredecessorShown = true
	}
	if IsPromptRecord(rec) && isAfter {
		if f.ev.DispatchUUID == "" {
			f.ev.DispatchUUID = rec.UUID
		}
		if rec.TimeOK && (!f.ev.HasDispatchMs || rec.TimeMs > f.ev.MaxDispatchMs) {
			f.ev.MaxDispatchMs, f.ev.HasDispatchMs = rec.TimeMs, true
		}
	}
	if f.bgStamped && IsPromptRecord(rec) {
		// Every record of a stamped background turn carries the stamp, and
		// the agent runs one turn at a time (a prompt aborts a running
		// notification turn and waits for it before its own record is
		// written), so a prompt record after the last stamped one proves the
		// background turn over: it is not the tail. An unstamped opener's
		// turn has no such end.
		f.ev.BackgroundIdx, f.ev.BackgroundUUID, f.ev.BackgroundKind = -1, "", ""
		f.bgStamped = false
	}
	if isAfter {
		f.ev.AfterAdmission++
		if rec.Type == qwen.TypeUser && !backgroundOrNotice(rec) {
			f.userAfter = true
		}
		if rec.Subtype == qwen.SubtypeGoalRuntime {
			f.goalAfter = true
		}
		if kind := BackgroundOpener(rec); kind != "" {
			f.ev.BackgroundIdx, f.ev.BackgroundUUID, f.ev.BackgroundKind = i, rec.UUID, kind
			f.bgStamped = rec.HasBackground
		}
	}
	if rec.Type == qwen.TypeSystem {
		switch {
		case rec.Subtype == qwen.SubtypeChatCompression && rec.Compression != nil && rec.Compression.HasHistory:
			f.lastComp, f.compUUID = i, rec.UUID
			if isAfter && !f.ev.CompressedAfter {
				f.ev.CompressedAfter, f.ev.CompressionUUID = true, rec.UUID
			}
		case IsLocalSlashCommandResult(rec, f.lastNS):
			f.lastLocal, f.afterLocal = i, 0
			if isAfter {
				f.ev.LocalCommandDone = true
				f.ev.AfterLocalCommand = 0
			}
		}
		return
	}
	if !visible(rec) {
		return
	}
	if isAfter {
		f.ev.VisibleAfter++
	}
	if rec.Provenance == "system" {
		return
	}
	if isAfter {
		f.ev.NonSystemAfter++
	}
	if f.ev.LocalCommandDone {
		f.ev.AfterLocalCommand++
	}
	if f.lastLocal >= 0 {
		f.afterLocal++
	}
	if rec.TimeOK {
		f.ev.LastVisibleMs, f.ev.HasLastVisible = rec.TimeMs, true
	}
	f.lastNS = rec
	f.ev.LastVisibleType = rec.Type
}

func (f *Fold) ownership(i int, rec *qwen.Record, ev events.Event) {
	o := &f.ev.Ownership
	if rec.Type == qwen.TypeSystem && rec.TurnResult != nil && rec.TurnResult.PromptID == f.target {
		t := rec.TurnResult
		o.TurnResult = t.State
		o.TurnResultCancelledAt, o.TurnResultHasError, o.TurnResultErrorCode = t.HasCancelledAt, t.HasError, t.ErrorCode
	}
	if rec.Type == qwen.TypeToolResult && rec.ToolStatus == "cancelled" && rec.ToolExecStatus == "not_started" &&
		o.TargetIdx >= 0 && o.FollowedBy == "" && f.calls.proof && o.PermissionStop == "" {
		o.PermissionStop = rec.UUID
	}
	if rec.Type != qwen.TypeUser || rec.Subtype != "" {
		return // notifications, cron, mid-turn messages, goal runtime: not a prompt's opening record
	}
	if rec.DaemonPromptID != "" {
		o.Active = true
	}
	switch {
	case PromptIdentity(rec) == f.target:
		o.TargetIdx, o.FollowedBy, o.PermissionStop = i, "", ""
	case o.TargetIdx < 0 || o.FollowedBy != "", rec.DaemonPromptID == f.target:
		// A user record of the target's that does not open its turn (no
		// message, system provenance) neither identifies nor follows it.
	case rec.DaemonPromptID != "":
		o.FollowedBy = "prompt " + rec.DaemonPromptID + "'s user record " + rec.UUID
	case ev.Provenance == events.ProvenanceRealUser || ev.Origin == events.OriginNone:
		o.FollowedBy = "a user record without prompt identity " + rec.UUID + " (a ledger-less writer)"
	}
}

// ReferenceEvidence returns the evidence exactly as the reference computes
// it: no ownership, and "after admission" by marker or clock only.
func (f *Fold) ReferenceEvidence() Evidence {
	ev := f.ev
	ev.Loaded = ev.ChainLen > 0
	ev.Ownership = Ownership{TargetIdx: -1, TurnEndIdx: -1}
	return ev
}

// Evidence returns the folded evidence. In ownership mode (the target's own
// turn is identified) "after admission" is re-anchored on the target's user
// record: a compression or local command after it belongs to its turn.
//
// With call identity (calls.go), once the target's turn has ended the
// evidence is the fold's as it stood before the record that ended it: what
// follows is another turn's. Only what names the target or vetoes it — its
// turn_result, a later prompt record, the chain's length and clock — is
// read from the whole chain.
func (f *Fold) Evidence() Evidence {
	if f.saved == nil {
		ev := f.evidence()
		ev.Ownership.CallIdentity, ev.Ownership.TurnID, ev.Ownership.TurnEndIdx = f.calls.active, f.calls.turnID, -1
		f.ownCheckpoint(&ev.Ownership)
		if f.ev.Ownership.TargetIdx >= 0 {
			ev.Ownership.CallConflict = f.calls.foreign
		}
		if o := &ev.Ownership; o.Active && o.TargetIdx < 0 {
			o.AbsenceBlock = f.absence.result(f)
			o.Absent = o.AbsenceBlock == ""
		}
		if ev.NotDispatched && !ev.Ownership.Active {
			ev.NeverStartedBlock = f.absence.result(f)
			switch {
			case ev.NeverStartedBlock != "":
			case ev.LocalCommandDone:
				ev.NeverStartedBlock = "a local slash command was answered after admission"
			case f.goalAfter:
				ev.NeverStartedBlock = "a goal-runtime message after the marker opens a prompt turn that may be the target's"
			}
			ev.NeverStarted = ev.NeverStartedBlock == ""
		}
		return ev
	}
	ev := f.saved.evidence()
	live := f.ev.Ownership
	o := &ev.Ownership
	o.FollowedBy, o.TurnResult = live.FollowedBy, live.TurnResult
	o.TurnResultCancelledAt, o.TurnResultHasError, o.TurnResultErrorCode = live.TurnResultCancelledAt, live.TurnResultHasError, live.TurnResultErrorCode
	o.CallIdentity, o.TurnID = true, f.calls.turnID
	o.TurnEndIdx, o.TurnEnd, o.CallConflict = f.calls.endIdx, f.calls.endWhy, f.calls.conflict
	if o.CallConflict == "" {
		o.CallConflict = f.calls.ambiguous
	}
	f.ownCheckpoint(o)
	ev.ChainLen, ev.ClockStep = f.ev.ChainLen, f.ev.ClockStep
	return ev
}

// ownCheckpoint sets o.Checkpoint when the target's own record is on the
// chain and its turn's branch_checkpoint proves it returned end_turn.
func (f *Fold) ownCheckpoint(o *Ownership) {
	if o.TargetIdx >= 0 {
		o.Checkpoint = f.ck.uuid
	}
}

// TurnEndIdx is the chain index of the record that ended the target's turn
// by call identity, -1 while it has not ended (or without call identity).
// The reconcile core snapshots the api history there.
func (f *Fold) TurnEndIdx() int {
	if f.saved == nil {
		return -1
	}
	return f.calls.endIdx
}

func (f *Fold) evidence() Evidence {
	ev := f.ev
	ev.Loaded = ev.ChainLen > 0
	// Conservative: any user-role record after the marker that is not a
	// background turn's opener might carry the target's prompt (a mid-turn
	// delivery, say), so only their total absence counts.
	ev.NotDispatched = ev.MarkerUUID != "" && ev.MarkerIdx >= 0 && ev.DispatchUUID == "" && !f.userAfter
	o := ev.Ownership
	if o.Active && o.TargetIdx >= 0 && o.FollowedBy == "" {
		ev.CompressedAfter = f.lastComp > o.TargetIdx
		if ev.CompressedAfter {
			ev.CompressionUUID = f.compUUID
		} else {
			ev.CompressionUUID = ""
		}
		// By position, like the compression fence: a slash result before the
		// target's own record is a predecessor's even when its clock reads
		// "after admission", and the target's own may carry a clock that
		// stepped back before the admission.
		ev.LocalCommandDone = f.lastLocal > o.TargetIdx
		ev.AfterLocalCommand = 0
		if ev.LocalCommandDone {
			ev.AfterLocalCommand = f.afterLocal
		}
		if f.lastBg > o.TargetIdx {
			ev.BackgroundIdx, ev.BackgroundUUID, ev.BackgroundKind = f.lastBg, f.lastBgUUID, f.lastBgKind
		}
	}
	return ev
}

func (f *Fold) clock(rec *qwen.Record) {
	if !rec.TimeOK {
		return
	}
	if f.hasTs && rec.TimeMs < f.maxTs && f.ev.ClockStep == "" {
		f.ev.ClockStep = fmt.Sprintf("record %s (%d) is older than record %s (%d)", rec.UUID, rec.TimeMs, f.maxTsUUID, f.maxTs)
	}
	if !f.hasTs || rec.TimeMs > f.maxTs {
		f.maxTs, f.maxTsUUID, f.hasTs = rec.TimeMs, rec.UUID, true
	}
}

// IsPromptRecord reports whether rec opens a prompt's turn: a plain user
// record (no subtype) written for a real user, or without provenance
// (legacy). Qwen Code's agent writes it when the prompt is dispatched, after
// the daemon appended the prompt's in_flight record.
func IsPromptRecord(rec *qwen.Record) bool {
	return rec.Type == qwen.TypeUser && !rec.HasSubtype && rec.Message != nil &&
		(rec.Provenance == "real_user" || rec.Provenance == "")
}

// PromptIdentity is the one answer to "whose prompt record is this?": the
// daemon prompt id of a record that opens that prompt's turn (a prompt
// record, IsPromptRecord, carrying daemonPromptId), "" for any other
// record. The reconcile core's tail owner and Status's target read it.
func PromptIdentity(rec *qwen.Record) string {
	if !IsPromptRecord(rec) {
		return ""
	}
	return rec.DaemonPromptID
}

// backgroundOrNotice: a user-role record that is never a prompt's — a
// cron prompt, a notification (delivered or cold) or a goal-runtime
// continuation, told apart by subtype whatever their provenance says.
func backgroundOrNotice(rec *qwen.Record) bool {
	switch rec.Subtype {
	case qwen.SubtypeCron, qwen.SubtypeNotification, qwen.SubtypeGoalRuntime:
		return true
	}
	return false
}

// BackgroundOpener names the execution class whose turn rec belongs to or
// opens, or "" when it is none.
//
// The evidence is the writer's own stamp: Qwen Code 0.24.4's createBaseRecord
// puts a backgroundTurn object on every record it creates inside a background
// notification turn (the notification when it was not persisted at delivery,
// assistant, tool_result and system records alike; ADR 0015). Every stamped
// record is therefore a background turn's, whatever its type.
//
// Fallbacks, for writers that do not stamp:
//   - deliveredTurn: true on a notification (newer Qwen source; 0.24.4 never
//     writes it): the user entry of a delivered turn — a cold notification
//     starts no turn;
//   - a cron record (the interactive CLI's recordCronPrompt; 0.24.4's serve
//     cron turns write no opener record at all);
//   - a goal-runtime continuation message (recordGoalRuntimeMessage).
func BackgroundOpener(rec *qwen.Record) string {
	if rec.HasBackground {
		return "notification turn"
	}
	if rec.Type != qwen.TypeUser {
		return ""
	}
	switch {
	case rec.Subtype == qwen.SubtypeCron:
		return "cron turn"
	case rec.Subtype == qwen.SubtypeNotification && rec.DeliveredTurn:
		return "notification turn"
	case rec.Subtype == qwen.SubtypeGoalRuntime:
		return "goal continuation"
	}
	return ""
}

// IsLocalSlashCommandResult mirrors the reference predicate (and the api
// history's slash-command pop): a slash_command result not sent to the model
// whose output items are all assistant items, answering the previous visible
// record — a plain user record whose only part is exactly the raw command.
func IsLocalSlashCommandResult(rec, previous *qwen.Record) bool {
	s := rec.SlashCommand
	if rec.Subtype != qwen.SubtypeSlashCommand || s == nil || previous == nil {
		return false
	}
	if s.Phase != "result" || s.SentToModel || !s.HasOutputItems || s.OutputItemsLength == 0 {
		return false
	}
	for _, t := range s.OutputItemTypes {
		if t != "assistant" {
			return false
		}
	}
	if previous.Type != qwen.TypeUser || previous.HasSubtype || previous.Message == nil || previous.Message.Role != "user" {
		return false
	}
	parts := previous.Message.Parts
	return len(parts) == 1 && parts[0].Kind == qwen.PartText && !parts[0].Thought && parts[0].OnlyText && parts[0].Text == s.RawCommand
}
