package simulations

import (
	"strconv"
	"time"
)

// The transcript lines the model writes are Qwen ChatRecord JSON lines as
// Qwen Code 0.24.4's ChatRecordingService writes them (chunk-DPEB6S2R.js):
// createBaseRecord's keys in its order — the backgroundTurn stamp first when
// the record is created inside a background notification turn, then uuid,
// parentUuid, sessionId, timestamp, type, provenance, cwd, version (gitBranch
// is omitted: the model's cwd is no git checkout) — then each record*
// method's own keys in the order its object literal spreads them. They are
// built by appending bytes rather than through encoding/json: the simulator
// writes millions of them and the encoder would dominate a run.

const (
	// recordBaseMs is the reference tests' RECORD_BASE_MS, Date.UTC(2026,0,1):
	// the model's clock starts there so traces read like the reference cases.
	recordBaseMs = 1767225600000

	notificationText = `<task-notification><task-id>agent-1</task-id><status>completed</status><summary>Agent \"explore\" completed.</summary></task-notification>`
	// notificationPayload is recordNotification's systemPayload for an agent
	// task ({displayText, backgroundTask: {taskId, status, kind}}; the
	// undefined sourceTurnId and toolUseId are dropped by JSON.stringify).
	notificationPayload = `{"displayText":"Agent \"explore\" completed.","backgroundTask":{"taskId":"agent-1","status":"completed","kind":"agent"}}`
)

type recKind uint8

const (
	recUser recKind = iota
	recSlashUser
	recSlashResult
	recAssistantText
	recAssistantCall
	recToolResult
	recNotification
	recCron
	recBgDone
	recCompression
	recTurnResult
	recTitle
	recSnapshot   // file_history_snapshot naming prompt (the turn's internal id)
	recTelemetry  // ui_telemetry: event "api_response" or "tool_call" (state), prompt_id prompt
	recCheckpoint // branch_checkpoint: startExclusiveRecordUuid prompt ("" = null), assistantRecordUuid calls[0]
)

// rec is what the model asks the encoder to write; only the fields its kind
// uses are read.
type rec struct {
	kind   recKind
	uuid   string
	parent string
	ms     int64
	daemon string   // daemonPromptId (user records of identity-writing daemons)
	calls  []string // functionCall / functionResponse ids ("" = no id)
	state  string   // turn_result state
	prompt string   // turn_result promptId
	// started is the turn_result's startedAt (the turn's dispatch clock).
	started int64
	// bg is the backgroundTurn stamp's turnId ("" = not stamped): set on
	// every record of a background notification turn by stamping daemons.
	bg string
	// delivered is the fallback writer's deliveredTurn flag on a
	// notification (newer Qwen source; never written by 0.24.4).
	delivered bool
	// usage: an assistant record of a completed model call carries
	// usageMetadata (0.24.4's recordAssistantTurn; the identity version).
	usage bool
	// code is an error turn_result's error.code ("" = none); cancelled is
	// a cancelled turn_result's cancelledAt (0 = none); answered says a
	// completed turn_result carries resultText (the turn streamed a final
	// answer).
	code      string
	cancelled int64
	answered  bool
	// denied: a tool_result of a call the permission step cancelled
	// (status "cancelled", executionStatus "not_started", no resultDisplay).
	denied bool
}

func appendTimestamp(b []byte, ms int64) []byte {
	b = append(b, '"')
	b = time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

func appendStr(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...) // the model only writes strings without escapes
	return append(b, '"')
}

// encode appends r as one transcript line, with its newline.
func encode(b []byte, sid string, r *rec) []byte {
	b = append(b, '{')
	if r.bg != "" {
		// The notification turn's identity, as #drainNotificationQueueExclusive
		// builds it: {turnId, taskId, kind, [toolUseId], [sourceTurnId],
		// [label], startedAt}.
		b = append(b, `"backgroundTurn":{"turnId":`...)
		b = appendStr(b, r.bg)
		b = append(b, `,"taskId":"agent-1","kind":"agent","startedAt":`...)
		b = strconv.AppendInt(b, r.ms, 10)
		b = append(b, `},`...)
	}
	b = append(b, `"uuid":`...)
	b = appendStr(b, r.uuid)
	b = append(b, `,"parentUuid":`...)
	if r.parent == "" {
		b = append(b, "null"...)
	} else {
		b = appendStr(b, r.parent)
	}
	b = append(b, `,"sessionId":`...)
	b = appendStr(b, sid)
	b = append(b, `,"timestamp":`...)
	b = appendTimestamp(b, r.ms)
	const base = `,"cwd":"/work/project","version":"0.24.4"`
	switch r.kind {
	case recUser, recSlashUser:
		b = append(b, `,"type":"user","provenance":"real_user"`+base...)
	case recAssistantText, recAssistantCall:
		b = append(b, `,"type":"assistant","provenance":"assistant_output"`+base...)
	case recToolResult:
		b = append(b, `,"type":"tool_result","provenance":"tool_result"`+base...)
	case recNotification:
		// createNotificationRecord overrides provenance in place.
		b = append(b, `,"type":"user","provenance":"system"`+base+`,"subtype":"notification"`...)
	case recCron:
		b = append(b, `,"type":"user","provenance":"system"`+base+`,"subtype":"cron"`...)
	case recBgDone:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"background_task_completed"`...)
	case recCompression:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"chat_compression"`...)
	case recSlashResult:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"slash_command"`...)
	case recTurnResult:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"turn_result"`...)
	case recSnapshot:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"file_history_snapshot"`...)
	case recTelemetry:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"ui_telemetry"`...)
	case recCheckpoint:
		b = append(b, `,"type":"system","provenance":"system"`+base+`,"subtype":"branch_checkpoint"`...)
	case recTitle:
		// SessionService.renameSession builds this record by hand: no
		// provenance, subtype before cwd.
		b = append(b, `,"type":"system","subtype":"custom_title","cwd":"/work/project","version":"0.24.4"`...)
	}
	switch r.kind {
	case recUser, recSlashUser:
		// recordUserMessage: daemonPromptId before the message.
		if r.daemon != "" {
			b = append(b, `,"daemonPromptId":`...)
			b = appendStr(b, r.daemon)
		}
		if r.kind == recSlashUser {
			b = append(b, `,"message":{"role":"user","parts":[{"text":"/help"}]}`...)
		} else {
			b = append(b, `,"message":{"role":"user","parts":[{"text":"please do the next thing"}]}`...)
		}
	case recAssistantText:
		b = append(b, `,"model":"sim-model","message":{"role":"model","parts":[{"text":"done."}]}`...)
	case recAssistantCall:
		b = append(b, `,"model":"sim-model","message":{"role":"model","parts":[{"text":"running tools"}`...)
		for _, id := range r.calls {
			b = append(b, `,{"functionCall":{`...)
			if id != "" {
				b = append(b, `"id":`...)
				b = appendStr(b, id)
				b = append(b, ',')
			}
			b = append(b, `"name":"run_shell_command","args":{}}}`...)
		}
		b = append(b, `]}`...)
	case recToolResult:
		id := r.calls[0]
		b = append(b, `,"message":{"role":"user","parts":[{"functionResponse":{`...)
		if id != "" {
			b = append(b, `"id":`...)
			b = appendStr(b, id)
			b = append(b, ',')
		}
		if r.denied {
			b = append(b, `"name":"run_shell_command","response":{"error":"Tool \"run_shell_command\" was canceled by the user."}}}]}`...)
		} else {
			b = append(b, `"name":"run_shell_command","response":{"output":"ok"}}}]}`...)
		}
		if id != "" {
			// 0.24.4's recordToolResult metadata: {callId, status,
			// executionStatus, resultDisplay} (resultDisplay undefined,
			// dropped, for a call cancelled before it ran: earlyErrorResponse,
			// acpAgent-GQCJ4KZY.js ~12235).
			b = append(b, `,"toolCallResult":{"callId":`...)
			b = appendStr(b, id)
			if r.denied {
				b = append(b, `,"status":"cancelled","executionStatus":"not_started"}`...)
			} else {
				b = append(b, `,"status":"success","executionStatus":"success","resultDisplay":"ok"}`...)
			}
		}
	case recNotification:
		b = append(b, `,"message":{"role":"user","parts":[{"text":"`+notificationText+`"}]},"systemPayload":`+notificationPayload...)
		if r.delivered {
			b = append(b, `,"deliveredTurn":true`...)
		}
	case recCron:
		b = append(b, `,"message":{"role":"user","parts":[{"text":"cron: check the build"}]}`...)
	case recBgDone:
		// recordBackgroundTaskCompleted: {displayText, backgroundTask}; its
		// stamp is deleted, so it never carries backgroundTurn.
		b = append(b, `,"systemPayload":`+notificationPayload...)
	case recCompression:
		b = append(b, `,"systemPayload":{"info":{"originalTokenCount":100,"newTokenCount":50,"compressionStatus":1},"compressedHistory":[{"role":"user","parts":[{"text":"summary"}]}]}`...)
	case recSlashResult:
		b = append(b, `,"systemPayload":{"phase":"result","rawCommand":"/help","outputHistoryItems":[{"type":"assistant","text":"Done."}]}`...)
	case recTurnResult:
		// #settleTurnRecording: promptId, state, stopReason?, error?,
		// startedAt?, cancelledAt?, endedAt, promptText (always), ...
		b = append(b, `,"systemPayload":{"promptId":`...)
		b = appendStr(b, r.prompt)
		b = append(b, `,"state":`...)
		b = appendStr(b, r.state)
		switch r.state {
		case "completed":
			b = append(b, `,"stopReason":"end_turn"`...)
		case "cancelled":
			b = append(b, `,"stopReason":"cancelled"`...)
		case "error":
			// normalizeTurnResultError (chunk-DPEB6S2R.js ~30354): {message,
			// code?}, code = String(err.code ?? err.rpcCode) when present.
			b = append(b, `,"error":{"message":"API error"`...)
			if r.code != "" {
				b = append(b, `,"code":`...)
				b = appendStr(b, r.code)
			}
			b = append(b, '}')
		}
		b = append(b, `,"startedAt":`...)
		b = strconv.AppendInt(b, r.started, 10)
		if r.cancelled != 0 {
			b = append(b, `,"cancelledAt":`...)
			b = strconv.AppendInt(b, r.cancelled, 10)
		}
		b = append(b, `,"endedAt":`...)
		b = strconv.AppendInt(b, r.ms, 10)
		b = append(b, `,"promptText":"please do the next thing"`...)
		if r.answered {
			// resultText only when the turn captured final text
			// (#settleTurnRecording, acpAgent-GQCJ4KZY.js ~8771).
			b = append(b, `,"resultText":"done."`...)
		}
		b = append(b, '}')
	case recTitle:
		b = append(b, `,"systemPayload":{"customTitle":"Later title","titleSource":"manual"}`...)
	case recCheckpoint:
		// recordBranchCheckpointTransaction (chunk-DPEB6S2R.js ~31105):
		// {v: 1, startExclusiveRecordUuid (the record before the turn, or
		// null), assistantRecordUuid (the turn's one tool-free answer)}.
		b = append(b, `,"systemPayload":{"v":1,"startExclusiveRecordUuid":`...)
		if r.prompt == "" {
			b = append(b, "null"...)
		} else {
			b = appendStr(b, r.prompt)
		}
		b = append(b, `,"assistantRecordUuid":`...)
		b = appendStr(b, r.calls[0])
		b = append(b, '}')
	case recSnapshot:
		// appendSerializedFileHistorySnapshotBatch: {snapshots: [{promptId,
		// timestamp, trackedFileBackups}]} (as the real daemon wrote it).
		b = append(b, `,"systemPayload":{"snapshots":[{"promptId":`...)
		b = appendStr(b, r.prompt)
		b = append(b, `,"timestamp":`...)
		b = appendTimestamp(b, r.ms)
		b = append(b, `,"trackedFileBackups":{}}]}`...)
	case recTelemetry:
		// recordUiTelemetryEvent: {uiEvent: {event.name, event.timestamp,
		// ..., prompt_id, ...}}; the metrics are left out.
		b = append(b, `,"systemPayload":{"uiEvent":{"event.name":"qwen-code.`+r.state+`","event.timestamp":`...)
		b = appendTimestamp(b, r.ms)
		if r.state == "tool_call" && r.calls[0] != "" {
			b = append(b, `,"call_id":`...)
			b = appendStr(b, r.calls[0])
			b = append(b, `,"function_name":"run_shell_command"`...)
		}
		b = append(b, `,"prompt_id":`...)
		b = appendStr(b, r.prompt)
		b = append(b, `}}`...)
	}
	if r.usage {
		b = append(b, `,"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}`...)
	}
	return append(b, "}\n"...)
}
