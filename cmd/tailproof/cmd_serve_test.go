package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// `tailproof serve` with no transport flags: in-process bus, Qwen's layout on
// local files; sessions from stdin and --scan; one JSON decision per line.
func TestServeInProcess(t *testing.T) {
	runtime, ws := t.TempDir(), "/work/project"
	store := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(runtime, ws))
	a, b := bustest.SessionID(1), bustest.SessionID(2)
	for _, id := range []string{a, b} {
		if err := bustest.Seed(context.Background(), store, id, 1); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	stdin := strings.NewReader(a + "\n\n../bad\n" + a + "\n")
	code := runServe(context.Background(), []string{"--qwen-runtime", runtime, "--cwd", ws, "--now", "1767225660000"}, stdin, &out, &errb)
	// Every session named is decided; the hostile id makes the exit a
	// usage error (2), as in every other command.
	if code != cli.Usage {
		t.Fatalf("exit %d, want %d: %s", code, cli.Usage, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	first, _ := bustest.ParseDoc([]byte(lines[0]))
	second, _ := bustest.ParseDoc([]byte(lines[1]))
	if target, verdict, _ := first.Verdict(); first.SessionID != a || verdict != "completed" || target != bustest.Prompt(a) {
		t.Errorf("first: %s", lines[0])
	}
	if _, verdict, _ := second.Verdict(); second.SessionID != a || verdict != "none" {
		t.Errorf("second: %s", lines[1])
	}
	if !strings.Contains(errb.String(), "invalid session id") {
		t.Errorf("hostile id not reported: %q", errb.String())
	}

	out.Reset()
	code = runServe(context.Background(), []string{"--qwen-runtime", runtime, "--cwd", ws, "--scan", "--now", "1767225660000"}, strings.NewReader(""), &out, &errb)
	if code != 0 || strings.Count(out.String(), "\n") != 2 || !strings.Contains(out.String(), `"sessionId":"`+b+`"`) || !strings.Contains(out.String(), `"target":"`+bustest.Prompt(b)+`","verdict":"completed"`) {
		t.Fatalf("scan: exit %d\n%s", code, out.String())
	}
}

// A session serve could not decide gives the exit code the same condition
// gives reconcile (--now before the prompt's admission: 2), after every
// other session is decided, and its ledger is left as it was.
func TestServeExitCodeOfUndecidedSessions(t *testing.T) {
	runtime, ws := t.TempDir(), "/work/project"
	store := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(runtime, ws))
	a := bustest.SessionID(1)
	if err := bustest.Seed(context.Background(), store, a, 1); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runServe(context.Background(), []string{"--qwen-runtime", runtime, "--cwd", ws, "--now", "5"}, strings.NewReader(a+"\n"), &out, &errb)
	if code != cli.Usage || out.Len() != 0 || !strings.Contains(errb.String(), "1 session(s) named were not decided") || !strings.Contains(errb.String(), "invalid clock") {
		t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s", code, cli.Usage, out.String(), errb.String())
	}
	out.Reset()
	code = runServe(context.Background(), []string{"--qwen-runtime", runtime, "--cwd", ws, "--now", "1767225660000"}, strings.NewReader(a+"\n"), &out, &errb)
	if code != cli.OK || !strings.Contains(out.String(), `"appended":`) {
		t.Fatalf("after the refusal the ledger was not as it was: exit %d, %s", code, out.String())
	}
}

// zeros is /dev/zero as a reader: bytes for ever, never a newline.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// serve's stdin that never ends a line (/dev/zero, a file of one huge line)
// stopped the list silently: bufio.Scanner's ErrTooLong ended the loop as a
// closed stdin would, and serve exited 0 as if every line were read. It now
// stops reading at the first line longer than any id, says where, decides
// the sessions named before it and exits 3.
func TestServeStdinWithoutNewline(t *testing.T) {
	runtime, ws := t.TempDir(), "/work/project"
	store := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(runtime, ws))
	a := bustest.SessionID(1)
	if err := bustest.Seed(context.Background(), store, a, 1); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	stdin := io.MultiReader(strings.NewReader(a+"\n"), zeros{})
	code := runServe(context.Background(), []string{"--qwen-runtime", runtime, "--cwd", ws, "--now", "1767225660000", "--dry-run"}, stdin, &out, &errb)
	if code != cli.Input {
		t.Fatalf("exit %d, want %d: %s", code, cli.Input, errb.String())
	}
	want := fmt.Sprintf("stdin line 2, offset %d: more than %d bytes without a newline", len(a)+1, maxStdinLine)
	if !strings.Contains(errb.String(), want) {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
	if doc, _ := bustest.ParseDoc(bytes.TrimSpace(out.Bytes())); doc.SessionID != a {
		t.Fatalf("the session named before the long line was not decided: %s", out.String())
	}
}
