package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// harnessSchemas runs every harness command's --json on real-shaped
// sessions and checks each document against its schema under docs/schemas/
// with TestSchemas's validator, so a field added to an output without its
// schema, or a schema that accepts an undocumented field, fails there.
func harnessSchemas(t *testing.T, s *schemaSet) {
	dir := t.TempDir()
	copyIn := func(src, name string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	codexFile := copyIn("../../testdata/turns/codex-crashed.jsonl", "codex.jsonl")
	claudeFile := copyIn("../../testdata/turns/claude-session.jsonl", "claude.jsonl")
	dshFile := copyIn("../../examples/dsh/crashed-session.jsonl", "dsh.jsonl")
	cases := []struct {
		schema string
		args   []string
	}{
		{"harness-status", []string{"status", "--harness", "codex", "--file", codexFile, "--json"}},
		{"harness-status", []string{"status", "--harness", "claude", "--file", claudeFile, "--json", "--writer-stopped"}},
		{"harness-status", []string{"status", "--harness", "dsh", "--file", dshFile, "--json"}},
		{"harness-replay", []string{"replay", "--harness", "claude", "--file", claudeFile, "--json"}},
		{"harness-replay", []string{"replay", "--harness", "codex", "--file", codexFile, "--json", "--writer-stopped"}},
		{"harness-replay", []string{"replay", "--harness", "dsh", "--file", dshFile, "--json"}},
		{"harness-status", []string{"status", "--harness", "dsh", "--file", "../../examples/dsh/v0/--home-me-proj--/sess-01/session.jsonl.zstd", "--json"}},
		{"harness-reconcile", []string{"reconcile", "--harness", "codex", "--file", codexFile, "--json", "--trace", "--now", "1796029200000"}},
		{"harness-reconcile", []string{"reconcile", "--harness", "claude", "--file", claudeFile, "--json", "--dry-run", "--now", "1796029200000"}},
		// With the sidecar written, status carries the stamp.
		{"harness-status", []string{"status", "--harness", "codex", "--file", codexFile, "--json", "--writer-stopped"}},
		{"harness-repair", []string{"repair", "--harness", "codex", "--file", codexFile, "--json"}},
		{"harness-repair", []string{"repair", "--harness", "claude", "--file", claudeFile, "--json"}},
		{"harness-repair-dsh", []string{"repair", "--harness", "dsh", "--file", dshFile, "--json"}},
		{"harness-simulate", []string{"simulate", "--harness", "claude", "--runs", "2", "--json"}},
	}
	for _, c := range cases {
		out, what := runJSON(t, 0, c.args...), strings.Join(c.args[:3], " ")
		if json.Valid(out) { // one document (simulate's is indented)
			s.check(c.schema+".schema.json", what, out)
		} else { // JSON Lines
			s.lines(c.schema+".schema.json", what, out)
		}
	}
}
