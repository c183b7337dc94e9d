package reconcile

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/guards"
)

// clockStep finds the first ledger record whose `at` is earlier than an
// earlier record's.
type clockStep struct {
	step string
	max  ledger.Record
	seen bool
}

func (c *clockStep) add(rec ledger.Record) {
	switch {
	case !c.seen:
		c.max, c.seen = rec, true
	case c.step == "" && rec.AtFloat() < c.max.AtFloat():
		c.step = fmt.Sprintf("%s is earlier than %s", rec.Describe(), c.max.Describe())
	case rec.AtFloat() > c.max.AtFloat():
		c.max = rec
	}
}

// foreignWorkspace applies Qwen Code's loadSession membership check when the
// store knows its workspace: the transcript's first record must have been
// written in that workspace (or in one of its .qwen/worktrees). Different
// workspaces can share a chats directory (/a/b and /a-b sanitize alike), and
// a record without a cwd makes the reference's loader throw. Qwen's third
// way in — a runtime-status file naming the session — is not read.
func foreignWorkspace(want string, chain *qwen.Chain) string {
	if want == "" || !chain.HasFirst {
		return ""
	}
	got := chain.FirstCwd
	if got == want {
		return ""
	}
	const marker = "/.qwen/worktrees/"
	if i := strings.LastIndex(got, marker); i > 0 && got[:i] == want {
		return ""
	}
	if got == "" {
		return "the transcript's first record has no cwd"
	}
	return fmt.Sprintf("the transcript's first record was written in workspace %q, not %q", got, want)
}

func markerText(t guards.TranscriptEvidence) string {
	switch {
	case t.MarkerUUID == "":
		return "none"
	case t.MarkerIdx < 0:
		return t.MarkerUUID + " (absent)"
	}
	return fmt.Sprintf("%s at #%d", t.MarkerUUID, t.MarkerIdx)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
