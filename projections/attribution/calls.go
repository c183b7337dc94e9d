package attribution

import (
	"strings"

	"github.com/tailproof/tailproof/events/qwen"
)

// Call identity (ADR 0023 part A). Qwen Code 0.24.4 names the turn that made
// every model and tool call, on disk:
//
//   - the ACP prompt path runs the n-th prompt's turn under the internal id
//     "<sessionId>########<n>" and records a file_history_snapshot naming it
//     right after the prompt's user record (acpAgent-GQCJ4KZY.js,
//     #executePromptInner: `promptId = sessionId + "########" + this.turn`,
//     `makeSnapshot(promptId)`, `recordFileHistorySnapshot`);
//   - a cron turn runs under "<sessionId>########cron<ms>"
//     (#executeCronPromptInner) and a notification turn under its turnId
//     "<sessionId>########notification<uuid>"
//     (#executeBackgroundNotificationPromptInner);
//   - every completed model call writes system/ui_telemetry
//     (qwen-code.api_response, uiEvent.prompt_id = that id) right before its
//     assistant record, which carries usageMetadata; every tool call writes
//     qwen-code.tool_call telemetry before its tool_result (chunk-2VS5EEXU.js
//     logApiResponse / logToolCall; loggingContentGenerator-DIC5SOXG.js logs
//     api_response only for a stream that completed without abort; an
//     aborted call's partial assistant record has neither telemetry nor
//     usage: GeminiChat's pendingPartialAssistantRecord, chunk-DPEB6S2R.js).
//
// So, once the target's own prompt record proves the writer is 0.24.4
// (version "0.24.4" and daemonPromptId), the target's turn is the run of
// records after it up to the first record that is provably another turn's:
// telemetry naming another main-session turn, or a record stamped
// backgroundTurn, or a second file_history_snapshot (a hard end); or an
// assistant record with no api_response of the target's turn right before it
// — a provisional end, revoked when telemetry of the target's own turn
// follows (a failed stream's partial record before a retry). Such a record
// with usage completed a call whose telemetry was skipped (an idle stream)
// and could be anyone's: call-identity refuses unless the end is revoked. Side queries
// ("<sid>#<agent>#<n>", "compress-<ms>") are neither own nor foreign.

// mainTurnMark separates the session id from a main-session turn's suffix
// (0.24.4's MAIN_SESSION_PROMPT_ID_DELIMITER, chunk-6IGW6HIV.js).
const mainTurnMark = "########"

// Proves0244Identities reports whether rec is a prompt record written by the
// Qwen Code 0.24.4 agent for a daemon prompt: the proof that the writer
// writes call identities (telemetry prompt ids, file_history_snapshot) for
// that prompt's turn.
func Proves0244Identities(rec *qwen.Record) bool {
	return IsPromptRecord(rec) && rec.DaemonPromptID != "" && rec.Version == qwen.Version0244
}

// mainTurn returns the suffix of a main-session turn id ("3", "cron…",
// "notification…"), ok false for any other id (side queries, internal ids).
func mainTurn(id string) (suffix string, ok bool) {
	i := strings.Index(id, mainTurnMark)
	if i <= 0 {
		return "", false
	}
	return id[i+len(mainTurnMark):], true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// calls follows the target's turn by call identity.
type calls struct {
	proof   bool   // the target's prompt record proves a 0.24.4 writer
	active  bool   // ...and its file_history_snapshot named its turn id
	turnID  string // the target's internal turn id
	ownResp bool   // the previous record is the target's own api_response telemetry
	hard    bool   // the turn provably ended
	endIdx  int    // chain index of the record that ended the turn, -1 if none
	endWhy  string
	// conflict: a call of the target's own turn after the turn provably
	// ended — the evidence contradicts one turn at a time.
	conflict string
	// ambiguous: the provisional end is a completed call's record (it has
	// usage) with no api_response before it — a stream idle for over five
	// minutes logs none — so whose call it was cannot be told.
	ambiguous string
	// foreign: the first call record after a proven 0.24.4 prompt record
	// that no snapshot followed is provably not the target's (see step).
	foreign string
	// seen counts the records after the target's prompt record while no
	// snapshot has named its turn: its own snapshot is the very next one.
	seen int
}

type callStep uint8

const (
	callNone   callStep = iota
	callReset           // the target's own prompt record: a new turn
	callEnd             // this record ends the target's turn
	callRevoke          // a provisional end was the target's own record after all
)

// step classifies chain record i before the fold takes it.
//
// Call identity needs the turn id from the target's own
// file_history_snapshot, recorded before the turn's first call: a chain
// that shows a call of the turn before it (or none at all: makeSnapshot
// failed, or a hand-built file that carries 0.24.4's version without its
// records) falls back to reading the whole tail, as before — labelled a
// fallback in the trace ("call identity: -").
func (c *calls) step(i int, rec *qwen.Record, target string) callStep {
	if PromptIdentity(rec) == target {
		*c = calls{proof: Proves0244Identities(rec), endIdx: -1}
		return callReset
	}
	if c.hard && c.conflict == "" && rec.Telemetry != nil && rec.Telemetry.PromptID == c.turnID {
		c.conflict = "telemetry " + rec.UUID + " of " + c.turnID + " after its turn ended (" + c.endWhy + ")"
	}
	if !c.proof || c.hard {
		return callNone
	}
	if !c.active {
		c.seen++
		switch {
		case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeFileHistorySnapshot && c.seen > 1:
			// 0.24.4 records a prompt's snapshot right after its user record
			// (makeSnapshot follows recordUserMessage with only the
			// UserPromptSubmit hook between). A later one is another turn's —
			// a retry or continue turn writes a snapshot and no user record —
			// after a target that wrote none (a blocked hook, a local slash
			// command): taken for the target's, it lent the target that
			// turn's answer (seed 3 scenario 169868, 2026-12-01).
			c.proof = false
			c.foreign = "file_history_snapshot " + rec.UUID + " of turn " + rec.SnapshotPromptID + " is not right after the target's 0.24.4 prompt record: another prompt turn's (a retry or continue writes no user record), after a target turn that wrote no snapshot"
		case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeFileHistorySnapshot:
			if suffix, ok := mainTurn(rec.SnapshotPromptID); ok && digits(suffix) {
				c.active, c.turnID = true, rec.SnapshotPromptID
			}
		case rec.Telemetry != nil, rec.Type == qwen.TypeAssistant, rec.Type == qwen.TypeToolResult, rec.HasBackground:
			c.proof = false // a call before the snapshot: no call identity for this turn
			c.foreign = foreignFirstCall(rec)
		}
		return callNone
	}
	own := c.ownResp
	c.ownResp = false
	switch {
	case rec.HasBackground:
		return c.end(i, true, "record "+rec.UUID+" of a background notification turn (backgroundTurn stamp)")
	case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeFileHistorySnapshot:
		// Every prompt turn records one snapshot at its start; another one is
		// a later turn's — a retry, continue or goal-runtime turn writes no
		// user record — even when it reuses the target's id: after a restart
		// the turn counter is primed from telemetry prompt ids only
		// (SessionTurnStateAccumulator, chunk-DPEB6S2R.js), so a turn cut
		// before its first completed call has its id handed out again.
		return c.end(i, true, "file_history_snapshot "+rec.UUID+" of a later prompt turn ("+rec.SnapshotPromptID+")")
	case rec.Type == qwen.TypeSystem && rec.Telemetry != nil:
		id := rec.Telemetry.PromptID
		if _, ok := mainTurn(id); !ok {
			return callNone // a side query or an internal id
		}
		if id != c.turnID {
			return c.end(i, true, "telemetry "+rec.UUID+" of turn "+id)
		}
		c.ownResp = rec.Telemetry.EventName == "qwen-code.api_response"
		if c.endIdx >= 0 {
			c.endIdx, c.endWhy, c.ambiguous = -1, "", ""
			return callRevoke
		}
	case rec.Type == qwen.TypeAssistant && !own:
		// loggingStreamWrapper logs api_response for every stream that
		// completed, with or without usage, right before GeminiChat records
		// the answer; its absence means an aborted or failed stream's partial
		// record (never usage) — or a stream idle for over five minutes
		// (STREAM_IDLE_TIMEOUT_MS), which completes with usage and no
		// telemetry.
		step := c.end(i, false, "assistant record "+rec.UUID+" without "+c.turnID+"'s api_response right before it")
		if step == callEnd && rec.HasUsage {
			c.ambiguous = "assistant record " + rec.UUID + " completed a call (usage) with no api_response before it (a stream idle over five minutes logs none): it may be the target's own answer or another turn's"
		}
		return step
	}
	return callNone
}

func (c *calls) end(i int, hard bool, why string) callStep {
	if hard {
		c.hard = true
	}
	if c.endIdx >= 0 {
		return callNone // already (provisionally) ended earlier
	}
	c.endIdx, c.endWhy = i, why
	return callEnd
}

// foreignFirstCall says why rec, the first call record after a proven
// 0.24.4 prompt record with no file_history_snapshot before it, is not the
// target's ("" when it may be). 0.24.4 writes no snapshot for a turn that
// makes no model call — a local slash command answered in place, a
// UserPromptSubmit hook that blocks (#executePromptInner,
// acpAgent-GQCJ4KZY.js ~7180, ~7240: both return before makeSnapshot) — and
// when makeSnapshot fails, the turn's calls still carry its own
// "<sid>########<n>" telemetry. So a partial text record first (no
// api_response, no usage: an aborted cron turn's), or telemetry naming a
// cron or notification turn, is not the target's completed answer — it is
// written after a restart that skipped reconciliation; read as the target's
// tail it decided the target from another turn's answer (found by the
// simulator's 0.24.4 model with serve cron turns, 2026-12-01). Assistant
// records with usage or a function call are left to the old reading: the
// hand-built 0.24.4 files of testdata/replay (no telemetry at all) keep
// theirs, and an idle cron stream's answer (usage, no telemetry) stays the
// residual shape of cron_turn.txt.
func foreignFirstCall(rec *qwen.Record) string {
	switch {
	case rec.Type == qwen.TypeAssistant && !rec.HasUsage && !hasFunctionCall(rec):
		// A text record without usage and without telemetry is an aborted
		// or failed stream's partial (a completed stream logs api_response
		// first): an aborted cron turn's, or the target's own cut answer;
		// never the target's completed one.
		return "assistant record " + rec.UUID + " without an api_response or usage before it follows the target's 0.24.4 prompt record, which no snapshot followed: a partial answer (an aborted cron turn's, or the target's own cut one), not the target's completed answer"
	case rec.Telemetry != nil:
		if suffix, ok := mainTurn(rec.Telemetry.PromptID); ok && !digits(suffix) {
			return "telemetry " + rec.UUID + " of turn " + rec.Telemetry.PromptID + " follows the target's 0.24.4 prompt record, which no snapshot followed: another turn's calls, not the target's"
		}
	}
	return ""
}

func hasFunctionCall(rec *qwen.Record) bool {
	if rec.Message == nil {
		return false
	}
	for _, p := range rec.Message.Parts {
		if p.Kind == qwen.PartFunctionCall {
			return true
		}
	}
	return false
}
