package tailproof

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
)

// TestStatusTranscriptStates: on Qwen's on-disk layout, a kill right after
// admission (a ledger, no transcript or an empty one) gets a status, not an
// error, whose pending verdict is the one Reconcile reaches; a transcript
// that exists but cannot be read is still ErrNoTranscript.
func TestStatusTranscriptStates(t *testing.T) {
	const sid = "00000000-0000-4000-8000-0000000000aa"
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, transcript string)
		want  TranscriptState
		err   bool
		// Reconcile's verdict: a missing or empty transcript with no archived
		// copy is a turn that wrote nothing (0.24.4 creates the file at its
		// first record's append and only appends; ADR 0023, 2026-12-01).
		verdict Verdict
	}{
		{"missing", func(*testing.T, string) {}, TranscriptMissing, false, VerdictInterrupted},
		{"empty", func(t *testing.T, p string) { writeFile(t, p, "") }, TranscriptEmpty, false, VerdictInterrupted},
		{"unreadable", func(t *testing.T, p string) {
			if err := os.MkdirAll(p, 0o700); err != nil { // a directory where the file should be
				t.Fatal(err)
			}
		}, "", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			layout := jsonl.NewQwenLayout(root, "/w")
			store := jsonl.NewQwenStore(vfs.OS, layout)
			tp, _ := layout.TranscriptPath(sid, jsonl.Active)
			lp, _ := layout.LedgerPath(sid, jsonl.Active)
			writeFile(t, lp, string(ledger.Encode(ledger.InFlight("p1", 1767225600000, "")))+"\n")
			c.setup(t, tp)
			st, err := Status(context.Background(), store, sid, StatusOptions{Ledger: store})
			if c.err {
				if !errors.Is(err, ErrNoTranscript) {
					t.Fatalf("want ErrNoTranscript, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("status: %v", err)
			}
			if st.Transcript != c.want || st.Kind != PlanClean || st.CanContinue || !st.Support.Notice.Supported {
				t.Fatalf("want a clean status with a notice and transcript %s, got:\n%s", c.want, st.Describe())
			}
			res, err := Reconcile(context.Background(), store, sid, Options{DryRun: true, Now: func() int64 { return 1767225700000 }})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Decisions) != 1 || res.Decisions[0].Verdict != c.verdict {
				t.Fatalf("reconcile: %+v", res.Decisions)
			}
			if _, err := os.Stat(tp); c.want == TranscriptMissing && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("status created the transcript: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
