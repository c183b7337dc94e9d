package tailproof_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// docs/harnesses.md carries a turn-by-turn replay of one real-shaped
// session of each harness. The replay is what the code prints today: this
// test fails when the page and the code disagree, and
// TAILPROOF_UPDATE_DOCS=1 rewrites the page's replay blocks.
func TestHarnessesPageReplaysTheSessions(t *testing.T) {
	page, err := os.ReadFile("docs/harnesses.md")
	if err != nil {
		t.Fatal(err)
	}
	out := string(page)
	for _, c := range []struct {
		name, file, path string
		h                turn.Harness
		// turnsOnly: a harness with its own ledger (Qwen): no sidecar, no
		// repair — the acts and verdicts only.
		turnsOnly bool
	}{
		{"codex", "testdata/turns/codex-session.jsonl", "/home/user/.codex/sessions/2026/11/30/rollout-2026-11-30T09-00-00-0199c0de-0000-7000-8000-000000000002.jsonl", codex.Harness(), false},
		{"claude", "testdata/turns/claude-session.jsonl", "/home/user/.claude/projects/-work-demo/5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4.jsonl", claude.Harness(), false},
		{"qwen", "testdata/replay/projects/-work-golden/chats/3c1f7a92-5d4e-4b8a-9f06-2e7d1c4b8a53.jsonl", "/home/user/.qwen/projects/-work-golden/chats/3c1f7a92-5d4e-4b8a-9f06-2e7d1c4b8a53.jsonl", qwen.Harness(), true},
	} {
		replay := harnessReplay(t, c.file, c.path, c.h, c.turnsOnly)
		open, close := "<!-- replay:"+c.name+" -->\n", "<!-- /replay:"+c.name+" -->"
		i, j := strings.Index(out, open), strings.Index(out, close)
		if i < 0 || j < i {
			t.Fatalf("docs/harnesses.md has no %s…%s block", strings.TrimSpace(open), close)
		}
		block := "```\n" + replay + "```\n"
		if out[i+len(open):j] != block {
			if os.Getenv("TAILPROOF_UPDATE_DOCS") == "" {
				t.Errorf("docs/harnesses.md's %s replay is stale; TAILPROOF_UPDATE_DOCS=1 go test -run TestHarnessesPage . rewrites it. Now:\n%s", c.name, block)
				continue
			}
			out = out[:i+len(open)] + block + out[j:]
		}
	}
	if out != string(page) {
		if err := os.WriteFile("docs/harnesses.md", []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// harnessReplay prints, for each line of the file, the record the codec
// reads and the acts it maps to; then each turn's decision; then what
// reconcile stamps and what repair does.
func harnessReplay(t *testing.T, file, path string, h turn.Harness, turnsOnly bool) string {
	var w strings.Builder
	w.WriteString("line  record → acts\n")
	var ds []turnverdict.Decision
	_, open := memSession(t, path, file)
	err := tailproof.ReplayTurns(context.Background(), open, h, true, func(st tailproof.TurnStep) error {
		for _, d := range st.Decided {
			ds = append(ds, d)
			if !st.Final {
				fmt.Fprintf(&w, "        ⇒ turn %d (%s) decided: the next one opened\n", d.Index, d.Turn)
			}
		}
		switch {
		case st.Final:
		case st.Damage != nil:
			fmt.Fprintf(&w, "%4d  %s\n", st.Pos.Line, shorten(st.Damage.Error(), 100))
		default:
			var names []string
			for _, a := range st.Acts {
				names = append(names, a.Describe())
			}
			if len(names) == 0 {
				names = []string{"(nothing)"}
			}
			fmt.Fprintf(&w, "%4d  %s\n        → %s\n", st.Pos.Line, shorten(st.Record.Describe(), 96), strings.Join(names, "; "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("\nverdicts (the writer stopped)\n")
	for _, d := range ds {
		w.WriteString(d.Describe() + "\n")
	}
	if turnsOnly {
		return w.String()
	}
	m, open := memSession(t, path, file)
	side := harnessfs.NewSidecar(m, path)
	res, err := tailproof.ReconcileTurns(context.Background(), open, side, tailproof.TurnReconcileOptions{Harness: h, Now: 1796029200000})
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("\nreconcile appends to " + side.Path()[strings.LastIndexByte(side.Path(), '/')+1:] + "\n")
	line, _ := m.ReadFile(side.Path())
	w.Write(line)
	fmt.Fprintf(&w, "(%d turns, %d stamped, %d unknown)\n", res.Turns, len(res.Appended), res.Unknown)
	rep, err := harnessfs.Repair(context.Background(), m, path, h, harnessfs.RepairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&w, "\nrepair: %s", rep.Action)
	if rep.Action != harnessfs.RepairNone {
		fmt.Fprintf(&w, " %d bytes at offset %d", rep.Bytes, rep.Offset)
	}
	if rep.Evidence != "" {
		fmt.Fprintf(&w, ", kept in %s", rep.Evidence[strings.LastIndexByte(rep.Evidence, '/')+1:])
	}
	w.WriteString("\n")
	return w.String()
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
