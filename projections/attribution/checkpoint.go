package attribution

import "github.com/tailproof/tailproof/events/qwen"

// The turn's own branch_checkpoint (ADR 0031). Qwen Code
// 0.24.4's #promptWithTurnRecording (acpAgent-GQCJ4KZY.js) takes the
// transcript cursor before a prompt's turn starts
// (getBranchCheckpointCursor: the last record's uuid, null while the
// transcript is empty) and, once #executePrompt returned, calls
// recordBranchCheckpointTransaction (chunk-DPEB6S2R.js). That writes a
// record only when the stopReason is end_turn and the records since the
// cursor hold a completed answer: a system/branch_checkpoint whose parent is
// the transcript's last record, with startExclusiveRecordUuid = the cursor
// and assistantRecordUuid = that answer. Cron, notification, goal and
// channel turns take no cursor and write none.
//
// So a checkpoint that follows the target's own 0.24.4 prompt record with
// no other prompt's record between, whose start is the record right before
// that prompt record ("" when it is the chain's root) and whose answer is
// the last assistant record since it, was written by the target's turn as
// it returned end_turn. A call of the target's own turn after it
// contradicts that, and revokes the proof.

// checkpoint follows the target's own branch_checkpoint.
type checkpoint struct {
	prev    string // uuid of the previous chain record
	looking bool   // after the target's own 0.24.4 prompt record, no checkpoint yet
	ownPrev string // uuid of the record right before that prompt record ("" at the root)
	answer  string // uuid of the last assistant record since it
	uuid    string // the proving checkpoint ("" when none)
	turnID  string // the target's turn id once the checkpoint proved (call identity)
}

func (k *checkpoint) add(f *Fold, rec *qwen.Record) {
	defer func() { k.prev = rec.UUID }()
	if PromptIdentity(rec) == f.target {
		*k = checkpoint{looking: Proves0244Identities(rec), ownPrev: k.prev}
		return
	}
	if k.uuid != "" {
		if k.turnID != "" && rec.Telemetry != nil && rec.Telemetry.PromptID == k.turnID {
			k.uuid = "" // a call of the target's turn after it returned
		}
		return
	}
	if !k.looking {
		return
	}
	switch {
	case IsPromptRecord(rec), rec.HasBackground:
		k.looking = false // another turn's record: a later checkpoint is not the target's
	case rec.Type == qwen.TypeAssistant:
		k.answer = rec.UUID
	case rec.Type == qwen.TypeSystem && rec.BranchCheckpoint != nil:
		k.looking = false
		c := rec.BranchCheckpoint
		if k.answer != "" && c.AssistantRecordUUID == k.answer && c.StartExclusiveRecordUUID == k.ownPrev && rec.ParentUUID == k.prev {
			k.uuid = rec.UUID
			if f.calls.active {
				k.turnID = f.calls.turnID
			}
		}
	}
}
