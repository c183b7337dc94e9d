package tailproof

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// scenarioRecord fills rec (uuid, chain, timestamp and cwd already set) for
// one transcript line of the scenario notation (scenario_test.go) and
// returns the provenance its kind defaults to.
func scenarioRecord(t *testing.T, rec map[string]any, kind, text string, args []string, ts int64) (prov string) {
	t.Helper()
	textPart := func(s string) map[string]any { return map[string]any{"text": s} }
	switch kind {
	case "user":
		rec["type"], prov = "user", "real_user"
		rec["message"] = map[string]any{"role": "user", "parts": []any{textPart(text)}}
	case "assistant":
		rec["type"], prov = "assistant", "assistant_output"
		rec["message"] = map[string]any{"role": "model", "parts": []any{textPart(text)}}
	case "fc":
		rec["type"], prov = "assistant", "assistant_output"
		fc := map[string]any{"name": "run_shell_command", "args": map[string]any{}}
		if len(args) > 0 && args[0] != "-" {
			fc["id"] = args[0]
		}
		if len(args) > 1 {
			fc["name"] = args[1]
		}
		rec["message"] = map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": fc}}}
	case "fr":
		rec["type"], prov = "tool_result", "tool_result"
		name := "run_shell_command"
		if len(args) > 1 {
			name = args[1]
		}
		rec["message"] = map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{
			"id": args[0], "name": name, "response": map[string]any{"output": "ok"}}}}}
	case "notification":
		rec["type"], rec["subtype"], prov = "user", "notification", "system"
		if text == "" {
			text = notificationText
		}
		rec["message"] = map[string]any{"role": "user", "parts": []any{textPart(text)}}
	case "cron":
		rec["type"], rec["subtype"], prov = "user", "cron", "system"
		rec["message"] = map[string]any{"role": "user", "parts": []any{textPart(text)}}
	case "compression":
		rec["type"], rec["subtype"], prov = "system", "chat_compression", "system"
		rec["systemPayload"] = map[string]any{
			"info":              map[string]any{"originalTokenCount": 100, "newTokenCount": 50, "compressionStatus": 1},
			"compressedHistory": []any{map[string]any{"role": "user", "parts": []any{textPart("summary")}}},
		}
	case "slash":
		rec["type"], rec["subtype"], prov = "system", "slash_command", "system"
		rec["systemPayload"] = map[string]any{"phase": "result", "rawCommand": args[0],
			"outputHistoryItems": []any{map[string]any{"type": "assistant", "text": "Done."}}}
	case "title":
		rec["type"], rec["subtype"] = "system", "custom_title"
		rec["systemPayload"] = map[string]any{"customTitle": text, "titleSource": "manual"}
	case "bgdone":
		// recordBackgroundTaskCompleted: the enqueue-time system record,
		// its backgroundTurn stamp deleted.
		rec["type"], rec["subtype"], prov = "system", "background_task_completed", "system"
		task := "task-1"
		if len(args) > 0 {
			task = args[0]
		}
		rec["systemPayload"] = map[string]any{"displayText": "Agent \"explore\" completed.",
			"backgroundTask": map[string]any{"taskId": task, "status": "completed", "kind": "agent"}}
	case "goal_turn_end":
		rec["type"], rec["subtype"], prov = "system", "goal_turn_end", "system"
		rec["systemPayload"] = map[string]any{"toolCallId": args[0]}
	case "turn_result":
		rec["type"], rec["subtype"], prov = "system", "turn_result", "system"
		p := map[string]any{"promptId": args[0], "state": args[1], "endedAt": ts}
		if args[1] == "cancelled" {
			p["cancelledAt"] = ts
		}
		rec["systemPayload"] = p
	case "telemetry":
		// recordUiTelemetryEvent: the uiEvent's prompt_id is the id the turn
		// sent the model with (acpAgent chunk of 0.24.4): "<sid>########<n>"
		// for the n-th ACP prompt, "<sid>########cron<ms>" for a cron turn
		// (#executeCronPromptInner), "<sid>#<name>#<n>" for a side query.
		rec["type"], rec["subtype"], prov = "system", "ui_telemetry", "system"
		ev := map[string]any{"event.name": "qwen-code." + args[0],
			"event.timestamp": time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z"),
			"prompt_id":       scenarioPromptID(args[1])}
		if args[0] == "tool_call" && len(args) > 2 {
			ev["call_id"], ev["function_name"] = args[2], "run_shell_command"
			if len(args) > 3 {
				ev["function_name"] = args[3]
			}
		}
		rec["systemPayload"] = map[string]any{"uiEvent": ev}
	case "snapshot":
		// The ACP prompt path's file_history_snapshot, written right after
		// the prompt's user record, names the turn's internal prompt id.
		rec["type"], rec["subtype"], prov = "system", "file_history_snapshot", "system"
		rec["systemPayload"] = map[string]any{"snapshots": []any{map[string]any{
			"promptId": scenarioPromptID(args[0]), "trackedFileBackups": map[string]any{},
			"timestamp": time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z")}}}
	case "source":
		rec["type"], rec["subtype"], prov = "system", "session_source", "system"
		p := map[string]any{"sourceType": args[0]}
		if len(args) > 1 {
			p["sourceId"] = args[1]
		}
		rec["systemPayload"] = p
	case "checkpoint":
		rec["type"], rec["subtype"], prov = "system", "branch_checkpoint", "system"
		p := map[string]any{"v": 1, "assistantRecordUuid": args[0], "startExclusiveRecordUuid": nil}
		if len(args) > 1 {
			p["startExclusiveRecordUuid"] = args[1]
		}
		rec["systemPayload"] = p
	default:
		t.Fatalf("unknown record kind %q", kind)
	}
	return prov
}

// scenarioPromptID is the internal prompt id a turn of session "S" runs
// under: "3" is the third ACP prompt's, "cron" a cron turn's started at B
// ("cron1767225650000" one started then: every call of one cron turn shares
// its id), "side" a side query's; anything else is taken as written.
func scenarioPromptID(turn string) string {
	switch {
	case turn == "cron":
		return "S########cron" + strconv.FormatInt(recordBaseMs, 10)
	case strings.HasPrefix(turn, "cron"):
		return "S########" + turn
	case turn == "side":
		return "S#managed-auto-memory-extractor-0#0"
	}
	if _, err := strconv.Atoi(turn); err == nil {
		return "S########" + turn
	}
	return turn
}
