package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/jsonl"
)

const cliTranscript = `{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/w","version":"1","message":{"role":"user","parts":[{"text":"run it"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/w","version":"1","message":{"role":"model","parts":[{"functionCall":{"id":"call-1","name":"run_shell_command","args":{}}}]}}
`

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFiles(t *testing.T, ledgerText, transcript string) (string, string) {
	dir := t.TempDir()
	lp, tp := filepath.Join(dir, "s.ledger.jsonl"), filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(lp, []byte(ledgerText), 0o600); err != nil {
		t.Fatal(err)
	}
	if transcript != "" {
		if err := os.WriteFile(tp, []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return lp, tp
}

func TestReconcileJSONInterface(t *testing.T) {
	lp, tp := writeFiles(t, `{"v":1,"promptId":"p1","state":"in_flight","at":1}`+"\n", cliTranscript)
	code, out, errs := runCLI(t, "reconcile", "--ledger", lp, "--transcript", tp, "--now", "1767225700000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The input report has tests of its own (hostile_test.go); here: clean.
	if w, ok := got["warnings"].([]any); !ok || len(w) != 0 {
		t.Fatalf("warnings on clean input: %v", got["warnings"])
	}
	if in, ok := got["input"].(map[string]any); !ok || in["ledger"].(map[string]any)["records"] != 1.0 {
		t.Fatalf("input: %v", got["input"])
	}
	delete(got, "warnings")
	delete(got, "input")
	want := map[string]any{
		"schemaVersion": 1.0, "sessionId": "", "rules": "tailproof", "dryRun": false, "dangling": []any{"p1"},
		"decisions": []any{map[string]any{
			"target": "p1", "verdict": "interrupted", "route": "tail-interrupted", "vetoes": []any{},
			"appended": map[string]any{"v": 1.0, "promptId": "p1", "terminal": "interrupted", "code": "daemon_lost", "at": 1767225700000.0},
		}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
	data, _ := os.ReadFile(lp)
	if !strings.HasSuffix(string(data), `{"v":1,"promptId":"p1","terminal":"interrupted","code":"daemon_lost","at":1767225700000}`+"\n") {
		t.Fatalf("ledger: %q", data)
	}
	// Second run: nothing to do.
	_, out, _ = runCLI(t, "reconcile", "--ledger", lp, "--transcript", tp, "--json")
	if !strings.Contains(out, `"dangling":[]`) || !strings.Contains(out, `"decisions":[]`) {
		t.Fatalf("second run: %s", out)
	}
}

func TestReconcileDryRunAndMissingTranscript(t *testing.T) {
	ledgerText := `{"v":1,"promptId":"p1","state":"in_flight","at":1}` + "\n"
	lp, tp := writeFiles(t, ledgerText, "")
	// Named explicitly, a missing transcript is a mistyped path: an input error.
	code, out, errs := runCLI(t, "reconcile", "--ledger", lp, "--transcript", tp, "--json", "--dry-run")
	if code != 3 || out != "" || !strings.Contains(errs, "--transcript "+tp+" does not exist") {
		t.Fatalf("explicit missing transcript: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// In Qwen's layout a session whose transcript is gone is evidence: unknown.
	runtime, ws, sid := t.TempDir(), "/w", "5f0c7d8e-1111-4222-8333-944455556666"
	layout := jsonl.NewQwenLayout(runtime, ws)
	p, _ := layout.LedgerPath(sid, jsonl.Active)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(ledgerText), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "reconcile", "--qwen-runtime", runtime, "--cwd", ws, "--session", sid, "--json", "--dry-run")
	if code != 0 {
		t.Fatalf("a missing transcript in the layout is evidence, not an error: exit %d %s", code, errs)
	}
	// No transcript and no archived copy: 0.24.4 creates the transcript at
	// its first record's append, so the prompt's turn wrote nothing (ADR
	// 0023, 2026-12-01 "A transcript never created"); a dry run appends nothing.
	if !strings.Contains(out, `"verdict":"interrupted"`) || !strings.Contains(out, `"route":"own-record-absent"`) || !strings.Contains(out, `"wouldAppend"`) ||
		!strings.Contains(out, `"dryRun":true`) || !strings.Contains(out, "absent: the session has no transcript") {
		t.Fatalf("got %s", out)
	}
	if data, _ := os.ReadFile(p); string(data) != ledgerText {
		t.Fatalf("ledger changed: %q", data)
	}
}

func TestReconcileUnusableInput(t *testing.T) {
	dir := t.TempDir()
	// A directory where the ledger should be: unreadable.
	lp := filepath.Join(dir, "ledger")
	os.Mkdir(lp, 0o700)
	code, _, errs := runCLI(t, "reconcile", "--ledger", lp, "--transcript", filepath.Join(dir, "t.jsonl"))
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "tailproof reconcile:") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{
		{"reconcile"},
		{"reconcile", "--ledger", "x"},
		{"reconcile", "--cwd", "/w", "--session", "../../etc/passwd"},
	} {
		if code, _, errs := runCLI(t, args...); code == 0 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}
