package simulations

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The identity version is the one released writer the model stands for
// (Qwen Code 0.24.4): it must write what that writer writes for background
// turns and nothing it never writes.
func TestIdentityShapesAre024(t *testing.T) {
	shapes, err := ModelShapes(context.Background(), 1, 600, "identity")
	if err != nil {
		t.Fatal(err)
	}
	stamped := map[string]bool{}
	for _, s := range shapes {
		kind := s.Type + "/" + s.Subtype
		has := slices.Contains(s.Fields, "backgroundTurn")
		if slices.Contains(s.Fields, "deliveredTurn") {
			t.Errorf("0.24.4 never writes deliveredTurn: %s", s)
		}
		switch kind {
		case "system/background_task_completed", "system/turn_result", "user/":
			if has {
				t.Errorf("0.24.4 never stamps this record: %s", s)
			}
		case "user/cron":
			t.Errorf("0.24.4's serve cron turns write no cron record: %s", s)
		}
		if has {
			stamped[kind] = true
			for _, f := range []string{"backgroundTurn.turnId", "backgroundTurn.taskId", "backgroundTurn.kind", "backgroundTurn.startedAt"} {
				if !slices.Contains(s.Fields, f) {
					t.Errorf("stamp without %s: %s", f, s)
				}
			}
		}
	}
	for _, k := range []string{"assistant/", "tool_result/", "user/notification"} {
		if !stamped[k] {
			t.Errorf("no stamped %s record in 600 runs", k)
		}
	}
}

// The fallback writer (the older versions) marks deliveredTurn and stamps
// nothing.
func TestFallbackShapesDoNotStamp(t *testing.T) {
	shapes, err := ModelShapes(context.Background(), 1, 600, "marker")
	if err != nil {
		t.Fatal(err)
	}
	delivered := false
	for _, s := range shapes {
		if slices.Contains(s.Fields, "backgroundTurn") {
			t.Errorf("the fallback writer stamps: %s", s)
		}
		delivered = delivered || slices.Contains(s.Fields, "deliveredTurn")
	}
	if !delivered {
		t.Error("no deliveredTurn notification in 600 runs")
	}
}

func ExampleModelShapes() {
	shapes, err := ModelShapes(context.Background(), 1, 600, "identity")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range shapes {
		fmt.Println(strings.ReplaceAll(s.String(), "cwd, ", ""))
	}
	// Output:
	// assistant {backgroundTurn, backgroundTurn.kind, backgroundTurn.startedAt, backgroundTurn.taskId, backgroundTurn.turnId, message, model, parentUuid, provenance, sessionId, timestamp, type, usageMetadata, uuid, version}
	// assistant {backgroundTurn, backgroundTurn.kind, backgroundTurn.startedAt, backgroundTurn.taskId, backgroundTurn.turnId, message, model, parentUuid, provenance, sessionId, timestamp, type, uuid, version}
	// assistant {message, model, parentUuid, provenance, sessionId, timestamp, type, usageMetadata, uuid, version}
	// assistant {message, model, parentUuid, provenance, sessionId, timestamp, type, uuid, version}
	// system/background_task_completed {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.backgroundTask, systemPayload.displayText, timestamp, type, uuid, version}
	// system/branch_checkpoint {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.assistantRecordUuid, systemPayload.startExclusiveRecordUuid, systemPayload.v, timestamp, type, uuid, version}
	// system/chat_compression {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.compressedHistory, systemPayload.info, timestamp, type, uuid, version}
	// system/custom_title {parentUuid, sessionId, subtype, systemPayload, systemPayload.customTitle, systemPayload.titleSource, timestamp, type, uuid, version}
	// system/file_history_snapshot {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.snapshots, timestamp, type, uuid, version}
	// system/slash_command {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.outputHistoryItems, systemPayload.phase, systemPayload.rawCommand, timestamp, type, uuid, version}
	// system/turn_result {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.cancelledAt, systemPayload.endedAt, systemPayload.promptId, systemPayload.promptText, systemPayload.startedAt, systemPayload.state, systemPayload.stopReason, timestamp, type, uuid, version}
	// system/turn_result {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.endedAt, systemPayload.error, systemPayload.promptId, systemPayload.promptText, systemPayload.startedAt, systemPayload.state, timestamp, type, uuid, version}
	// system/turn_result {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.endedAt, systemPayload.promptId, systemPayload.promptText, systemPayload.resultText, systemPayload.startedAt, systemPayload.state, systemPayload.stopReason, timestamp, type, uuid, version}
	// system/turn_result {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.endedAt, systemPayload.promptId, systemPayload.promptText, systemPayload.startedAt, systemPayload.state, systemPayload.stopReason, timestamp, type, uuid, version}
	// system/ui_telemetry {backgroundTurn, backgroundTurn.kind, backgroundTurn.startedAt, backgroundTurn.taskId, backgroundTurn.turnId, parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.uiEvent, timestamp, type, uuid, version}
	// system/ui_telemetry {parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.uiEvent, timestamp, type, uuid, version}
	// tool_result {backgroundTurn, backgroundTurn.kind, backgroundTurn.startedAt, backgroundTurn.taskId, backgroundTurn.turnId, message, parentUuid, provenance, sessionId, timestamp, toolCallResult, toolCallResult.callId, toolCallResult.executionStatus, toolCallResult.resultDisplay, toolCallResult.status, type, uuid, version}
	// tool_result {message, parentUuid, provenance, sessionId, timestamp, toolCallResult, toolCallResult.callId, toolCallResult.executionStatus, toolCallResult.resultDisplay, toolCallResult.status, type, uuid, version}
	// tool_result {message, parentUuid, provenance, sessionId, timestamp, toolCallResult, toolCallResult.callId, toolCallResult.executionStatus, toolCallResult.status, type, uuid, version}
	// tool_result {message, parentUuid, provenance, sessionId, timestamp, type, uuid, version}
	// user {daemonPromptId, message, parentUuid, provenance, sessionId, timestamp, type, uuid, version}
	// user/notification {backgroundTurn, backgroundTurn.kind, backgroundTurn.startedAt, backgroundTurn.taskId, backgroundTurn.turnId, message, parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.backgroundTask, systemPayload.displayText, timestamp, type, uuid, version}
	// user/notification {message, parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.backgroundTask, systemPayload.displayText, timestamp, type, uuid, version}
}
