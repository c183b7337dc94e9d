package qwenserve

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/simulations"
)

// realShapesFile is the inventory of record shapes the real 0.24.4 daemon
// wrote over a long run (`go run ./simulations/qwenserve/cmd --seed 1
// --crashes 150 --shapes simulations/qwenserve/testdata/real-shapes-0.24.4.txt`).
const realShapesFile = "testdata/real-shapes-0.24.4.txt"

// knownShapeDifferences are the shapes on which the simulator's model of
// 0.24.4 (the "identity" version) and the real daemon differ, each with the
// reason it may stay. A difference not listed fails
// TestModelShapesAgainstRealDaemon; so does a listed one that went away.
var knownShapeDifferences = map[string]string{
	// Shapes the real daemon writes that the model does not.
	"real: system/chat_compression {cwd, parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.completedToolCallIds, systemPayload.compressedHistory, systemPayload.info, timestamp, type, uuid, version}": "completedToolCallIds: the model's checkpoint omits it; apihistory does not read it",
	// Shapes the model writes that this harness never drove the real daemon to write.
	"model: tool_result {backgroundTurn, backgroundTurn.kind, backgroundTurn.startedAt, backgroundTurn.taskId, backgroundTurn.turnId, cwd, message, parentUuid, provenance, sessionId, timestamp, toolCallResult, toolCallResult.callId, toolCallResult.executionStatus, toolCallResult.resultDisplay, toolCallResult.status, type, uuid, version}": "a tool call inside a notification turn: the mock answers notifications with text only",
	"model: tool_result {cwd, message, parentUuid, provenance, sessionId, timestamp, toolCallResult, toolCallResult.callId, toolCallResult.executionStatus, toolCallResult.status, type, uuid, version}":                                                                                                                                            "a call the permission step cancelled (status cancelled, executionStatus not_started, no resultDisplay: earlyErrorResponse, acpAgent-GQCJ4KZY.js ~12235): the harness's daemon approves every call",
	"model: system/custom_title {cwd, parentUuid, sessionId, subtype, systemPayload, systemPayload.customTitle, systemPayload.titleSource, timestamp, type, uuid, version}":                                                                                                                                                                         "renames are not driven by the harness (SessionService.renameSession writes it, read in the bundle)",
	"model: tool_result {cwd, message, parentUuid, provenance, sessionId, timestamp, type, uuid, version}":                                                                                                                                                                                                                                          "a tool result without toolCallResult: the model's id-less tool call, which 0.24.4's writer does not produce through serve",
	"model: user/notification {cwd, message, parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.backgroundTask, systemPayload.displayText, timestamp, type, uuid, version}":                                                                                                                                                   "an unstamped notification persisted on delivery from the daemon (recordNotificationStrict): the harness's background shells run in the ACP child, so the daemon delivers none",
	"model: system/chat_compression {cwd, parentUuid, provenance, sessionId, subtype, systemPayload, systemPayload.compressedHistory, systemPayload.info, timestamp, type, uuid, version}":                                                                                                                                                          "the model's checkpoint without completedToolCallIds (see the real shape above)",
}

// TestModelShapesAgainstRealDaemon is the differential of issue #13 item 5:
// the record shapes (type, subtype, field set; values aside) the
// simulator's 0.24.4 model writes against those the real daemon wrote.
func TestModelShapesAgainstRealDaemon(t *testing.T) {
	b, err := os.ReadFile(realShapesFile)
	if err != nil {
		t.Fatalf("the real daemon's inventory: %v", err)
	}
	var real []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			real = append(real, l)
		}
	}
	if len(real) == 0 {
		t.Fatal("empty inventory")
	}
	ms, err := simulations.ModelShapes(context.Background(), 1, 600, "identity")
	if err != nil {
		t.Fatal(err)
	}
	var model []string
	for _, s := range ms {
		model = append(model, s.String())
	}
	diff := map[string]bool{}
	for _, s := range real {
		if !slices.Contains(model, s) {
			diff["real: "+s] = true
		}
	}
	for _, s := range model {
		if !slices.Contains(real, s) {
			diff["model: "+s] = true
		}
	}
	for _, k := range sortedKeys(diff) {
		if _, ok := knownShapeDifferences[k]; !ok {
			t.Errorf("new difference between the model and the real daemon: %s", k)
		}
	}
	for _, k := range sortedKeys(knownShapeDifferences) {
		if !diff[k] {
			t.Errorf("listed difference no longer differs (remove it): %s", k)
		}
	}
}
