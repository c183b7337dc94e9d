package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof"
)

// An interactive Qwen Code session (no daemonPromptId, no turn_result)
// beside a ledger that admitted nothing: `status --json` printed
// "turn": null because the ledger-based status names no prompt. The
// transcript's last turn is decided instead (ADR 0046), the same as with no
// ledger at all.
func TestQwenStatusTurnWithoutPromptIdentities(t *testing.T) {
	const sid = "b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d"
	rec := func(uuid, parent, body string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"` + sid + `","timestamp":"2026-11-29T14:10:10.000Z","cwd":"/w","version":"0.24.4",` + body + "}\n"
	}
	transcript := rec("u0", "", `"type":"user","message":{"role":"user","parts":[{"text":"list files"}]}`) +
		rec("f0", "u0", `"type":"system","subtype":"file_history_snapshot","systemPayload":{"promptId":"`+sid+`########1"}`) +
		rec("a0", "f0", `"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"call-1","name":"run_shell_command","args":{}}}]},"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}`)
	dir := t.TempDir()
	tp, lp := filepath.Join(dir, sid+".jsonl"), filepath.Join(dir, sid+".ledger.jsonl")
	if err := os.WriteFile(tp, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"status", "--harness", "qwen", "--file", tp, "--writer-stopped", "--json"},
		{"status", "--transcript", tp, "--ledger", lp, "--writer-stopped", "--json"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		var got struct {
			Turn *tailproof.TurnSummary `json:"turn"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.Turn == nil {
			t.Fatalf("%v: turn is null:\n%s", args, out.String())
		}
		if got.Turn.ID != "u0" || got.Turn.Verdict != "interrupted" || len(got.Turn.DanglingCalls) != 1 || len(got.Turn.Resend) != 1 {
			t.Fatalf("%v: turn %+v, want u0 interrupted with call-1 dangling and its prompt to resend", args, *got.Turn)
		}
	}
}
