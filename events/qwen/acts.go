package qwen

import (
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// Harness is Qwen Code transcripts for turn.Read: this codec, this mapper,
// and Qwen's framing (its reader splits the file on newlines and parses a
// final line without one like any other, so that line is read if it
// decodes). It decides from the transcript alone; with a prompt ledger the
// reconcile core (machines/reconcile) knows more and decides instead.
func Harness() turn.Harness {
	return turn.Harness{Name: "qwen", Codec: Codec{}, Mapper: Mapper{}}
}

// Mapper maps Qwen Code 0.24.4 ChatRecords onto the vocabulary. ADR 0041
// has the table; every mapping below names the 0.24.4 bundle function that
// writes the record (chunk files under
// @qwen-code/qwen-code@0.24.4/chunks/: DPEB6S2R is the core's
// ChatRecordingService, GQCJ4KZY the ACP agent, 2VS5EEXU the telemetry
// logger, KYFJLESB the slash-command parser).
type Mapper struct{}

// turnMarkSep is what every main-session turn id of 0.24.4 holds:
// "<sid>########<n>" for the n-th ACP prompt (acpAgent-GQCJ4KZY.js
// #executePromptInner), "<sid>########cron<ms>" for a cron turn
// (#executeCronPromptInner), "<sid>########notification<uuid>" for a
// notification turn (#drainNotificationQueueExclusive). Subagents and side
// queries use "<sid>#<agent>#<n>" (the memory extractor's
// "#managed-auto-memory-extractor-<hex>#0" lands between a turn's
// branch_checkpoint and its turn_result), /compress "compress-<ms>": those
// are not turns of the session and never mark one.
const turnMarkSep = "########"

func mainTurn(id string) bool { return strings.Contains(id, turnMarkSep) }

// Map implements turn.Mapper.
func (Mapper) Map(dst []turn.Act, ev events.Event) []turn.Act {
	r, ok := ev.Body.(*Record)
	if !ok {
		return dst
	}
	base := turn.Act{Pos: ev.Pos, Time: ev.Time, UUID: r.UUID, Parent: r.ParentUUID, Native: ev.Kind}
	// createBaseRecord (DPEB6S2R) stamps backgroundTurn on every record a
	// background notification turn creates: the stamp names that turn.
	stamp := ""
	if r.BackgroundTurn != nil && mainTurn(r.BackgroundTurn.TurnID) {
		stamp = r.BackgroundTurn.TurnID
		m := base
		m.Kind, m.Turn = turn.KindTurnMark, stamp
		dst = append(dst, m)
	}
	switch r.Type {
	case TypeUser:
		return userActs(dst, base, r, stamp)
	case TypeAssistant:
		return assistantActs(dst, base, r)
	case TypeToolResult:
		return toolResultActs(dst, base, r)
	case TypeSystem:
		return systemActs(dst, base, r, stamp)
	}
	a := base
	a.Kind = turn.KindUnknown
	return append(dst, a)
}

func userActs(dst []turn.Act, base turn.Act, r *Record, stamp string) []turn.Act {
	a := base
	a.Kind, a.Text, a.Turn = turn.KindPrompt, text(r.Message), stamp
	a.Prompt = r.DaemonPromptID
	if a.Prompt == "" {
		a.Prompt = r.PromptID
	}
	switch {
	case !r.HasSubtype || r.Subtype == "":
		// recordUserMessage (DPEB6S2R), called by the ACP prompt path
		// (GQCJ4KZY prompt → #executePromptInner) with the bridge's prompt id
		// as daemonPromptId: the record opens that prompt's turn, whose
		// turn_result names the same id. The interactive CLI
		// (LlmClient.sendMessageStream) writes no id: an implicit turn.
		a.Source, a.Origin, a.Reason = userSource(r.Provenance)
		if a.Source == turn.SourceUser && isSlashCommand(a.Text) {
			// The ACP path records slash input as a user record too; a
			// resume that sent it again would run the command again.
			a.Source, a.Origin = turn.SourceCommand, events.OriginStructural
		}
		// A UserPromptSubmit hook that blocks ends the turn end_turn right
		// after this record (#executePromptInner, GQCJ4KZY ~7240), before the
		// file_history_snapshot: until the turn's own mark shows it went on,
		// the record alone may be the whole turn.
		a.Stop = turn.StopUnclear
		if r.DaemonPromptID != "" {
			s := base
			s.Kind, s.Turn = turn.KindTurnStart, r.DaemonPromptID
			dst = append(dst, s)
			a.Turn = r.DaemonPromptID
		}
	case r.Subtype == SubtypeNotification:
		// createNotificationRecord (DPEB6S2R): provenance system; a
		// background task's notification, fed to the model.
		a.Source, a.Origin = turn.SourceNotification, events.OriginStructural
	case r.Subtype == SubtypeCron:
		// recordCronPrompt (DPEB6S2R): a scheduled prompt.
		a.Source, a.Origin = turn.SourceScheduler, events.OriginStructural
	case r.Subtype == SubtypeMidTurnUserMessage:
		// recordMidTurnUserMessage (DPEB6S2R): a person's message delivered
		// into the running turn at a tool boundary.
		a.Source, a.Origin, a.Reason = userSource(r.Provenance)
		a.Steer = true
	case r.Subtype == SubtypeGoalRuntime:
		// recordGoalRuntimeMessage (DPEB6S2R): the goal runtime's own
		// continuation text, provenance goal_runtime.
		a.Source, a.Origin = turn.SourceInjected, events.OriginStructural
	case r.Subtype == SubtypeRealtimeMessage:
		// recordRealtimeConversation (DPEB6S2R): a voice transcript, kept
		// out of the model's history.
		a = base
		a.Kind = turn.KindNote
	default:
		a = base
		a.Kind = turn.KindUnknown
	}
	return append(dst, a)
}

// userSource reads a user record's provenance (createBaseRecord's default
// for a user record is real_user; records built by hand have none).
func userSource(p string) (turn.Source, events.Origin, string) {
	switch p {
	case "real_user":
		return turn.SourceUser, events.OriginCarried, ""
	case "":
		return turn.SourceUser, events.OriginGuessed, ""
	case "system":
		return turn.SourceInjected, events.OriginCarried, ""
	case "goal_runtime", "goal_control":
		return turn.SourceInjected, events.OriginCarried, ""
	}
	return turn.SourceUnknown, events.OriginCarried, "provenance " + p
}

// isSlashCommand is 0.24.4's isSlashCommand (KYFJLESB): a leading "/", not
// "//" or "/*", and no path separator in the first token.
func isSlashCommand(q string) bool {
	if !strings.HasPrefix(q, "/") || strings.HasPrefix(q, "//") || strings.HasPrefix(q, "/*") {
		return false
	}
	tok := strings.TrimLeft(q[1:], " \t\r\n\f\v")
	if i := strings.IndexAny(tok, " \t\r\n\f\v"); i >= 0 {
		tok = tok[:i]
	}
	return !strings.ContainsAny(tok, `/\`)
}

func assistantActs(dst []turn.Act, base turn.Act, r *Record) []turn.Act {
	if r.HasSubtype && r.Subtype == SubtypeRealtimeMessage {
		a := base
		a.Kind = turn.KindNote
		return append(dst, a)
	}
	// recordAssistantTurn (DPEB6S2R) writes one record per model call:
	// usageMetadata only when the provider reported tokens. A stream that
	// was aborted or failed leaves its partial answer through GeminiChat's
	// pendingPartialAssistantRecord, without usage — but a provider that
	// reports no tokens leaves a complete answer without usage too (ADR
	// 0023), so a usage-less record is a message whose intent the record
	// does not state, never proof of a cut stream.
	stop := turn.StopUnclear
	if r.HasUsage {
		stop = turn.StopFinal
	}
	var parts []Part
	if r.Message != nil {
		parts = r.Message.Parts
	}
	for _, p := range parts {
		if p.Kind == PartFunctionCall {
			stop = turn.StopContinue // the model asked for a tool: it goes on
			break
		}
	}
	n := len(dst)
	for _, p := range parts {
		a := base
		switch {
		case p.Kind == PartFunctionCall:
			a.Kind, a.Call, a.Name = turn.KindToolCall, p.ID, p.Name
		case p.Kind == PartText && p.Thought:
			a.Kind, a.Stop = turn.KindReasoning, stop
		default:
			a.Kind, a.Stop = turn.KindOutput, stop
		}
		dst = append(dst, a)
	}
	if len(dst) == n {
		a := base
		a.Kind, a.Stop = turn.KindOutput, stop
		dst = append(dst, a)
	}
	return dst
}

func toolResultActs(dst []turn.Act, base turn.Act, r *Record) []turn.Act {
	if r.HasSubtype && r.Subtype == SubtypeCodeModeToolResult {
		a := base
		a.Kind = turn.KindNote
		return append(dst, a)
	}
	// recordToolResult (DPEB6S2R): the functionResponse parts answer the
	// calls by id; toolCallResult.status is success, error or cancelled.
	// A call the permission step cancelled is status cancelled,
	// executionStatus not_started (earlyErrorResponse, GQCJ4KZY), and the
	// turn then ends once the batch is answered (stopAfterPermissionCancel).
	failed := r.ToolStatus == "error" || r.ToolStatus == "cancelled"
	ends := r.ToolStatus == "cancelled" && r.ToolExecStatus == "not_started"
	n := len(dst)
	if r.Message != nil {
		for _, p := range r.Message.Parts {
			if p.Kind != PartFunctionResponse {
				continue
			}
			a := base
			a.Kind, a.Call, a.Name, a.Failed = turn.KindToolResult, p.ID, p.Name, failed
			if ends {
				a.Stop = turn.StopFinal
			}
			dst = append(dst, a)
		}
	}
	if len(dst) == n {
		a := base
		a.Kind, a.Reason = turn.KindNote, "tool_result without a functionResponse"
		dst = append(dst, a)
	}
	return dst
}

func systemActs(dst []turn.Act, base turn.Act, r *Record, stamp string) []turn.Act {
	a := base
	switch r.Subtype {
	case SubtypeTurnResult:
		// #settleTurnRecording (GQCJ4KZY): the settled outcome of the ACP
		// prompt whose id it names, written when prompt() returns or throws.
		if r.TurnResult == nil {
			a.Kind = turn.KindUnknown
			break
		}
		tr := r.TurnResult
		a.Kind, a.Turn, a.Reason = turn.KindTurnEnd, tr.PromptID, tr.StopReason
		switch tr.State {
		case "completed":
			a.End = turn.EndCompleted
		case "cancelled":
			a.End = turn.EndCancelled
		case "error":
			a.End, a.Reason = turn.EndFailed, errorReason(tr)
		default:
			// No state 0.24.4 writes: not an end this mapper can read.
			a.Kind, a.Turn, a.Reason = turn.KindUnknown, "", "turn_result state "+tr.State
		}
	case SubtypeBranchCheckpoint:
		// recordBranchCheckpointTransaction (DPEB6S2R), called by the ACP
		// prompt path (GQCJ4KZY ~6646) after #executePrompt returned, and
		// written only for stopReason end_turn with a tool-free answer: the
		// turn ended, though not every end_turn is an answer — the final
		// answer guard reads the answer.
		// Its startExclusiveRecordUuid is the cursor taken before the turn
		// ran (#promptWithTurnRecording: the transcript's last record, null
		// while empty): where its turn began (ADR 0031).
		a.Kind, a.End, a.Reason = turn.KindTurnEnd, turn.EndUnstated, "branch_checkpoint"
		if r.BranchCheckpoint != nil {
			a.Since, a.HasSince = r.BranchCheckpoint.StartExclusiveRecordUUID, true
		}
	case SubtypeChatCompression:
		// recordChatCompression (DPEB6S2R).
		a.Kind = turn.KindCompaction
	case "rewind":
		// rewindRecording (DPEB6S2R): the chain goes on from an earlier
		// turn's parent; the records after it are off the active chain.
		a.Kind, a.Reason = turn.KindRollback, "rewind"
	case SubtypeUITelemetry:
		// recordUiTelemetryEvent (logApiResponse, logApiError, logToolCall,
		// 2VS5EEXU): prompt_id names the turn that made the call.
		a.Kind = turn.KindNote
		if r.Telemetry != nil && mainTurn(r.Telemetry.PromptID) && r.Telemetry.PromptID != stamp {
			a.Kind, a.Turn = turn.KindTurnMark, r.Telemetry.PromptID
		}
	case SubtypeFileHistorySnapshot:
		// recordFileHistorySnapshot (DPEB6S2R), right after an ACP prompt's
		// user record (a retry or continue turn writes it without one):
		// its snapshot names the turn. A rewind re-writes surviving
		// snapshots; those name earlier turns and open nothing.
		a.Kind = turn.KindNote
		if mainTurn(r.SnapshotPromptID) && r.SnapshotPromptID != stamp {
			a.Kind, a.Turn = turn.KindTurnMark, r.SnapshotPromptID
		}
	case SubtypeSlashCommand:
		// recordSlashCommand (DPEB6S2R): the invocation of a local command
		// and its result; the command itself is never resent.
		a.Kind = turn.KindNote
		switch {
		case r.SlashCommand == nil:
		case r.SlashCommand.Phase == "invocation":
			a.Kind, a.Source, a.Origin, a.Text = turn.KindPrompt, turn.SourceCommand, events.OriginStructural, r.SlashCommand.RawCommand
		case r.SlashCommand.Phase == "result":
			// The local command's answer, shown in place of a model's: the
			// turn's end unless its output is sent on to the model.
			a.Kind, a.Stop, a.Reason = turn.KindOutput, turn.StopFinal, "local command result"
			if r.SlashCommand.SentToModel {
				a.Stop = turn.StopContinue
			}
		}
	case "":
		a.Kind = turn.KindUnknown
	default:
		// background_task_completed (written before the notification turn
		// that answers it, never stamped), custom_title, session_source,
		// session_model, attribution_snapshot, goal_state, goal_turn_end,
		// at_command and the other subtypes of the union: nothing about
		// where a turn stands.
		a.Kind = turn.KindUnknown
		for _, s := range KnownSubtypes {
			if s == r.Subtype {
				a.Kind = turn.KindNote
				break
			}
		}
	}
	return append(dst, a)
}

func errorReason(tr *TurnResult) string {
	switch {
	case tr.ErrorCode != "" && tr.ErrorMessage != "":
		return tr.ErrorCode + ": " + tr.ErrorMessage
	case tr.ErrorCode != "":
		return tr.ErrorCode
	case tr.ErrorMessage != "":
		return tr.ErrorMessage
	}
	return "error"
}

// text joins a message's text parts (not thoughts): what a resume would
// send of it.
func text(c *Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p.Kind == PartText && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
