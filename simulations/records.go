package simulations

import (
	"strconv"
	"time"
)

// The transcript lines the model writes are Qwen ChatRecord JSON lines in
// createBaseRecord's key order. They are built by appending bytes rather
// than through encoding/json: the simulator writes millions of them and the
// encoder would dominate a run.

const (
	// recordBaseMs is the reference tests' RECORD_BASE_MS, Date.UTC(2026,0,1):
	// the model's clock starts there so traces read like the reference cases.
	recordBaseMs = 1767225600000

	notificationText = `<task-notification><task-id>agent-1</task-id><status>completed</status><summary>Agent \"explore\" completed.</summary></task-notification>`
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
	recCompression
	recTurnResult
	recTitle
)

// rec is what the model asks the encoder to write; only the fields its kind
// uses are read.
type rec struct {
	kind      recKind
	uuid      string
	parent    string
	ms        int64
	daemon    string   // daemonPromptId (user records of identity-writing daemons)
	calls     []string // functionCall / functionResponse ids ("" = no id)
	state     string   // turn_result state
	prompt    string   // turn_result promptId
	delivered bool     // notification that is a delivered turn's user entry
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
	b = append(b, `{"uuid":`...)
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
	switch r.kind {
	case recUser, recSlashUser:
		b = append(b, `,"type":"user","provenance":"real_user"`...)
	case recAssistantText, recAssistantCall:
		b = append(b, `,"type":"assistant","provenance":"assistant_output"`...)
	case recToolResult:
		b = append(b, `,"type":"tool_result","provenance":"tool_result"`...)
	case recNotification:
		b = append(b, `,"type":"user","subtype":"notification","provenance":"system"`...)
	case recCron:
		b = append(b, `,"type":"user","subtype":"cron","provenance":"system"`...)
	case recCompression:
		b = append(b, `,"type":"system","subtype":"chat_compression","provenance":"system"`...)
	case recSlashResult:
		b = append(b, `,"type":"system","subtype":"slash_command","provenance":"system"`...)
	case recTurnResult:
		b = append(b, `,"type":"system","subtype":"turn_result","provenance":"system"`...)
	case recTitle:
		// SessionService.renameSession builds this record by hand: no provenance.
		b = append(b, `,"type":"system","subtype":"custom_title"`...)
	}
	b = append(b, `,"cwd":"/work/project","version":"0.24.4"`...)
	switch r.kind {
	case recUser:
		b = append(b, `,"message":{"role":"user","parts":[{"text":"please do the next thing"}]}`...)
	case recSlashUser:
		b = append(b, `,"message":{"role":"user","parts":[{"text":"/help"}]}`...)
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
		b = append(b, `"name":"run_shell_command","response":{"output":"ok"}}}]}`...)
		if id != "" {
			b = append(b, `,"toolCallResult":{"callId":`...)
			b = appendStr(b, id)
			b = append(b, `,"status":"success"}`...)
		}
	case recNotification:
		b = append(b, `,"message":{"role":"user","parts":[{"text":"`+notificationText+`"}]}`...)
		if r.delivered {
			b = append(b, `,"deliveredTurn":true`...)
		}
	case recCron:
		b = append(b, `,"message":{"role":"user","parts":[{"text":"cron: check the build"}]}`...)
	case recCompression:
		b = append(b, `,"systemPayload":{"info":{"originalTokenCount":100,"newTokenCount":50,"compressionStatus":1},"compressedHistory":[{"role":"user","parts":[{"text":"summary"}]}]}`...)
	case recSlashResult:
		b = append(b, `,"systemPayload":{"phase":"result","rawCommand":"/help","outputHistoryItems":[{"type":"assistant","text":"Done."}]}`...)
	case recTurnResult:
		b = append(b, `,"systemPayload":{"promptId":`...)
		b = appendStr(b, r.prompt)
		b = append(b, `,"state":`...)
		b = appendStr(b, r.state)
		b = append(b, `,"endedAt":`...)
		b = strconv.AppendInt(b, r.ms, 10)
		b = append(b, '}')
	case recTitle:
		b = append(b, `,"systemPayload":{"customTitle":"Later title","titleSource":"manual"}`...)
	}
	if r.daemon != "" {
		b = append(b, `,"daemonPromptId":`...)
		b = appendStr(b, r.daemon)
	}
	return append(b, "}\n"...)
}
