package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeHarnessExamples runs every `go run ./cmd/tailproof …` line of
// README's harness section from the repository root (the writing ones on a
// copy, as the README says), and checks the excerpt it quotes is what the
// Claude Code example prints.
func TestReadmeHarnessExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "### Codex CLI, Claude Code and dsh sessions")
	if !ok {
		t.Fatal("README has no harness section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	tmp := t.TempDir()
	t.Chdir("../..")
	if err := os.CopyFS(filepath.Join(tmp, "codex"), os.DirFS("examples/codex")); err != nil {
		t.Fatal(err)
	}
	ran := 0
	var claudeOut, qwenOut, qwenJSON string
	for _, line := range strings.Split(sec, "\n") {
		rest, ok := strings.CutPrefix(line, "go run ./cmd/tailproof ")
		if !ok {
			continue
		}
		// The simulation's size is not what is checked here.
		rest = strings.ReplaceAll(strings.ReplaceAll(rest, "/tmp/codex", filepath.Join(tmp, "codex")), "--runs 200", "--runs 5")
		args := strings.Fields(rest)
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Errorf("%s: exit %d: %s", line, code, errb.String())
		}
		if len(args) > 2 && args[0] == "status" && args[2] == "claude" {
			claudeOut = out.String()
		}
		if len(args) > 2 && args[0] == "status" && args[2] == "qwen" {
			if strings.Contains(rest, "--ledger") {
				qwenOut = out.String()
			} else {
				qwenJSON = out.String()
			}
		}
		ran++
	}
	if ran < 8 {
		t.Fatalf("ran %d README commands", ran)
	}
	_, quoted, _ := strings.Cut(sec, "last turn, for instance, reads:\n\n```\n")
	quoted, _, _ = strings.Cut(quoted, "```")
	if quoted == "" || !strings.Contains(claudeOut, quoted) {
		t.Fatalf("README quotes\n%s\nbut the command prints\n%s", quoted, claudeOut)
	}
	_, quoted, _ = strings.Cut(sec, "Without\na ledger, the example's `--json` object holds:\n\n```\n")
	quoted, _, _ = strings.Cut(quoted, "\n```")
	if quoted == "" || !strings.Contains(qwenJSON, quoted) {
		t.Fatalf("README quotes\n%s\nbut the ledger-less Qwen command prints\n%s", quoted, qwenJSON)
	}
	_, quoted, _ = strings.Cut(sec, "a prompt killed during a tool call, reads:\n\n```\n")
	quoted, _, _ = strings.Cut(quoted, "```")
	if quoted == "" || !strings.Contains(qwenOut, quoted) {
		t.Fatalf("README quotes\n%s\nbut the Qwen command prints\n%s", quoted, qwenOut)
	}
}
