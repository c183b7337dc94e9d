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
		got := statusTurn(t, args...)
		if got.ID != "u0" || got.Verdict != "interrupted" || len(got.DanglingCalls) != 1 || len(got.Resend) != 1 {
			t.Fatalf("%v: turn %+v, want u0 interrupted with call-1 dangling and its prompt to resend", args, got)
		}
	}
}

// statusTurn runs a status command that must succeed and returns its
// --json document's turn object, which must not be null.
func statusTurn(t *testing.T, args ...string) tailproof.TurnSummary {
	t.Helper()
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
	return *got.Turn
}

// The real daemon's cron recording (testdata/replay, 3c1f7a92): prompt
// 233e03c8 settled (ledger lines 1–2, turn_result at record 11), then cron
// turns ran (records 12–34: no user record, no ledger record, no
// turn_result) until prompt 4c30bc6d was admitted after record 33. Cut after
// each of records 11–33 with the ledger as it stood: `status --json`'s turn
// described the settled prompt as completed whatever the cron turns showed.
// The session's last turn is the cron turn once one has written (ADR 0050):
// never 233e03c8, never completed (truth: each cut stopped a cron turn, or
// left its answer without the end record a cron turn never writes), and the
// same object with the ledger as without it.
func TestQwenStatusTurnAfterSettledPrompt(t *testing.T) {
	const sid = "3c1f7a92-5d4e-4b8a-9f06-2e7d1c4b8a53"
	const settled = "233e03c8-fd5e-4685-bd9b-7cf850c3d183"
	src := filepath.Join("..", "..", "testdata", "replay", "projects", "-work-golden", "chats")
	records, err := os.ReadFile(filepath.Join(src, sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	led, err := os.ReadFile(filepath.Join(src, sid+".ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines, ledLines := bytes.SplitAfter(records, []byte("\n")), bytes.SplitAfter(led, []byte("\n"))
	if !bytes.Contains(ledLines[1], []byte(`"terminal":"completed"`)) || !bytes.Contains(lines[10], []byte(`"turn_result"`)) ||
		!bytes.Contains(lines[34], []byte(`"daemonPromptId":"4c30bc6d`)) {
		t.Fatal("the recording is not the one this test describes")
	}
	dir := t.TempDir()
	tp, lp := filepath.Join(dir, sid+".jsonl"), filepath.Join(dir, sid+".ledger.jsonl")
	if err := os.WriteFile(lp, bytes.Join(ledLines[:2], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	cron := 0
	for n := 11; n <= 33; n++ {
		if err := os.WriteFile(tp, bytes.Join(lines[:n], nil), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, stopped := range []bool{true, false} {
			args := []string{"status", "--harness", "qwen", "--file", tp, "--json"}
			if stopped {
				args = append(args, "--writer-stopped")
			}
			with, without := statusTurn(t, append(args, "--ledger", lp)...), statusTurn(t, args...)
			if n <= 12 { // the turn_result, then a cron turn's first telemetry: no cron progress yet
				if with.ID != settled || with.Verdict != "completed" || with.Because != "ledger-terminal" {
					t.Fatalf("cut after record %d: turn %s %s (%s), want %s completed by its ledger terminal", n, with.ID, with.Verdict, with.Because, settled)
				}
				continue
			}
			cron++
			if with.ID == settled || with.Verdict == "completed" {
				t.Fatalf("cut after record %d (a cron turn): turn %s %s (%s), want the cron turn, interrupted or unknown", n, with.ID, with.Verdict, with.Because)
			}
			wj, _ := json.Marshal(with)
			oj, _ := json.Marshal(without)
			if !bytes.Equal(wj, oj) {
				t.Fatalf("cut after record %d: the ledger changed the cron turn's object:\nwith    %s\nwithout %s", n, wj, oj)
			}
		}
	}
	if cron == 0 {
		t.Fatal("no cut ended in a cron turn")
	}
}
