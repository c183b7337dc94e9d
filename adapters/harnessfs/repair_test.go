package harnessfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

const (
	codexPath  = "/h/.codex/sessions/2026/11/30/rollout-2026-11-30T09-00-00-0199c0de-0000-7000-8000-000000000001.jsonl"
	claudePath = "/h/.claude/projects/-w/5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4.jsonl"
)

// Codex's shapes (codex-rs protocol types; see events/codex/testdata).
var codexLines = []string{
	`{"timestamp":"2026-11-30T09:00:00.000Z","type":"session_meta","payload":{"id":"0199c0de-0000-7000-8000-000000000001","timestamp":"2026-11-30T09:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.169.0","source":"cli"}}`,
	`{"timestamp":"2026-11-30T09:00:01.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}`,
	`{"timestamp":"2026-11-30T09:00:01.003Z","type":"event_msg","payload":{"type":"user_message","message":"rename the files to 日本語","kind":"plain"}}`,
	`{"timestamp":"2026-11-30T09:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"mv\",\"a\",\"日本語\"]}","call_id":"c1"}}`,
}

// Claude Code's shapes (2.1.328 bundle; events/claude/testdata).
var claudeLines = []string{
	`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"write the migration"},"uuid":"u1","promptId":"p1","origin":{"kind":"human"},"timestamp":"2026-11-30T10:00:00.000Z","sessionId":"5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4","version":"2.1.328"}`,
	`{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"I will add a column."}],"stop_reason":null},"uuid":"a1","timestamp":"2026-11-30T10:00:01.500Z","sessionId":"5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4","version":"2.1.328"}`,
}

func put(t *testing.T, m *memory.FS, path string, b []byte) {
	t.Helper()
	if err := m.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func verdicts(t *testing.T, fsys vfs.FS, path string, h turn.Harness) string {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ds, err := turnverdict.DecideAll(turn.Read(f, h), turnverdict.Options{WriterStopped: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s %s %s|", d.Turn, d.Verdict, d.Because)
	}
	return b.String()
}

func whole(lines []string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// Every cut of the last record at every byte: repair closes the file at a
// line boundary, keeps exactly the removed bytes aside, never touches a
// byte before them, and leaves every verdict as it was. A second repair
// does nothing.
func TestRepairAtEveryByteOfTheLastRecord(t *testing.T) {
	for _, c := range []struct {
		name  string
		path  string
		h     turn.Harness
		lines []string
	}{
		{"codex", codexPath, codex.Harness(), codexLines},
		{"claude", claudePath, claude.Harness(), claudeLines},
	} {
		full := whole(c.lines)
		prefix := len(whole(c.lines[:len(c.lines)-1]))
		for cut := prefix; cut <= len(full); cut++ {
			m := memory.NewFS()
			orig := full[:cut]
			put(t, m, c.path, orig)
			before := verdicts(t, m, c.path, c.h)
			res, err := harnessfs.Repair(context.Background(), m, c.path, c.h, harnessfs.RepairOptions{})
			if err != nil {
				t.Fatalf("%s cut %d: %v", c.name, cut, err)
			}
			got, _ := m.DurableFile(c.path)
			switch {
			case cut == prefix || cut == len(full):
				if res.Action != harnessfs.RepairNone || !bytes.Equal(got, orig) {
					t.Fatalf("%s cut %d: %s on a file ending in a newline", c.name, cut, res.Action)
				}
			case cut == len(full)-1:
				// The whole record without its newline: Codex's and Claude
				// Code's loaders read it, so it is terminated, not cut.
				if res.Action != harnessfs.RepairTerminated || !bytes.Equal(got, full) {
					t.Fatalf("%s cut %d: %s, file %q", c.name, cut, res.Action, got[prefix:])
				}
			default:
				if res.Action != harnessfs.RepairCut || !bytes.Equal(got, full[:prefix]) {
					t.Fatalf("%s cut %d: %s, file ends %q", c.name, cut, res.Action, got[max(0, len(got)-20):])
				}
				kept, err := m.DurableFile(res.Evidence)
				if err != nil || !bytes.Equal(kept, orig[prefix:]) {
					t.Fatalf("%s cut %d: evidence %s = %q, %v", c.name, cut, res.Evidence, kept, err)
				}
			}
			if after := verdicts(t, m, c.path, c.h); after != before {
				t.Fatalf("%s cut %d: repair changed the verdicts\n%s\n%s", c.name, cut, before, after)
			}
			again, err := harnessfs.Repair(context.Background(), m, c.path, c.h, harnessfs.RepairOptions{})
			if err != nil || again.Action != harnessfs.RepairNone {
				t.Fatalf("%s cut %d: second repair %s %v", c.name, cut, again.Action, err)
			}
		}
	}
}

// After a cut, the harness's own next append starts a line of its own:
// the record the torn fragment would have swallowed survives.
func TestRepairKeepsTheHarnessNextRecordWhole(t *testing.T) {
	m := memory.NewFS()
	full := whole(codexLines)
	put(t, m, codexPath, full[:len(full)-30])
	if _, err := harnessfs.Repair(context.Background(), m, codexPath, codex.Harness(), harnessfs.RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	f, _ := m.OpenFile(codexPath, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(`{"timestamp":"2026-11-30T09:05:00.000Z","type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1","reason":"interrupted"}}` + "\n"))
	f.Close()
	if got := verdicts(t, m, codexPath, codex.Harness()); got != "t1 interrupted abort-recorded|" {
		t.Fatalf("after resume: %s", got)
	}
}

// Claude Code 2.1.328 strips NUL bytes at a line's start before parsing, so
// a NUL run followed by a whole record is a record it reads: terminated,
// never cut. A NUL run alone is a fragment.
func TestRepairClaudeNULRuns(t *testing.T) {
	for _, c := range []struct {
		tail string
		want harnessfs.RepairAction
	}{
		{"\x00\x00\x00" + claudeLines[1], harnessfs.RepairTerminated},
		{"\x00\x00\x00\x00", harnessfs.RepairCut},
	} {
		m := memory.NewFS()
		put(t, m, claudePath, append(whole(claudeLines[:1]), c.tail...))
		res, err := harnessfs.Repair(context.Background(), m, claudePath, claude.Harness(), harnessfs.RepairOptions{})
		if err != nil || res.Action != c.want {
			t.Errorf("tail %q: %s %v, want %s", c.tail[:6], res.Action, err, c.want)
		}
	}
}

// A whole record glued to a torn one is one bad line to Codex's loader
// (serde_json reads the line whole) and to the codec alike: a fragment,
// cut and kept aside.
func TestRepairCutsAGluedFragment(t *testing.T) {
	glued := append(whole(codexLines[:3]), (codexLines[3] + codexLines[1][:20])...)
	m := memory.NewFS()
	put(t, m, codexPath, glued)
	res, err := harnessfs.Repair(context.Background(), m, codexPath, codex.Harness(), harnessfs.RepairOptions{})
	if err != nil || res.Action != harnessfs.RepairCut {
		t.Fatalf("%s %v", res.Action, err)
	}
	if kept, _ := m.DurableFile(res.Evidence); string(kept) != codexLines[3]+codexLines[1][:20] {
		t.Fatalf("evidence %q", kept)
	}
}

// A segment a codec reads as whole records followed by a torn one (a
// format whose lines may hold several records) is left alone, and so is one
// too long to check: nothing is written.
func TestRepairRefuses(t *testing.T) {
	full := whole(codexLines)
	glued := append(whole(codexLines[:3]), "{a}{b"...)
	for name, c := range map[string]struct {
		b   []byte
		max int
		h   turn.Harness
	}{
		"records glued to a torn one": {glued, 0, turn.Harness{Name: "braces", Codec: braces{}}},
		"too long":                    {full[:len(full)-10], 64, codex.Harness()},
	} {
		m := memory.NewFS()
		put(t, m, codexPath, c.b)
		_, err := harnessfs.Repair(context.Background(), m, codexPath, c.h, harnessfs.RepairOptions{MaxLineBytes: c.max})
		if !errors.Is(err, harnessfs.ErrRepairRefused) {
			t.Errorf("%s: %v", name, err)
		}
		if got, _ := m.ReadFile(codexPath); !bytes.Equal(got, c.b) {
			t.Errorf("%s: the file was written", name)
		}
	}
}

// A live writer (its check says so) or a directory where the file should be
// stops the repair before anything is written.
func TestRepairRefusesALiveWriterAndNonFiles(t *testing.T) {
	m := memory.NewFS()
	full := whole(codexLines)
	put(t, m, codexPath, full[:len(full)-10])
	live := func(context.Context) error { return harnessfs.ErrWriterLive }
	if _, err := harnessfs.Repair(context.Background(), m, codexPath, codex.Harness(), harnessfs.RepairOptions{WriterLive: live}); !errors.Is(err, harnessfs.ErrWriterLive) {
		t.Fatalf("live writer: %v", err)
	}
	if got, _ := m.ReadFile(codexPath); !bytes.Equal(got, full[:len(full)-10]) {
		t.Fatal("repaired under a live writer")
	}
	dir := filepath.Join(filepath.Dir(codexPath), "dir.jsonl")
	m.MkdirAll(dir, 0o700)
	if _, err := harnessfs.Repair(context.Background(), m, dir, codex.Harness(), harnessfs.RepairOptions{}); !errors.Is(err, harnessfs.ErrNotRegular) {
		t.Fatalf("directory: %v", err)
	}
}

// On the real filesystem a FIFO is refused before it is opened (an open
// for reading would block until a writer came).
func TestRepairRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := harnessfs.Repair(context.Background(), vfs.OS, p, codex.Harness(), harnessfs.RepairOptions{}); !errors.Is(err, harnessfs.ErrNotRegular) {
		t.Fatalf("FIFO: %v", err)
	}
}

// A crash at every filesystem operation of a cut, losing unsynced bytes or
// keeping them: afterwards the file is either untouched or cut, never
// anything else, the fragment is in an evidence copy whenever the cut is
// durable, and a repair run after the reboot finishes the job.
func TestRepairCrashAtEveryOperation(t *testing.T) {
	full := whole(codexLines)
	orig := full[:len(full)-25]
	prefix := full[:len(whole(codexLines[:3]))]
	probe := memory.NewFS()
	put(t, probe, codexPath, orig)
	base := []int{}
	ops := []memory.Op{memory.OpOpen, memory.OpRead, memory.OpWrite, memory.OpSync, memory.OpTruncate,
		memory.OpStat, memory.OpLink, memory.OpRemove, memory.OpSyncDir, memory.OpLock}
	for _, op := range ops {
		base = append(base, probe.Count(op))
	}
	if _, err := harnessfs.Repair(context.Background(), probe, codexPath, codex.Harness(), harnessfs.RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	points := 0
	for i, op := range ops {
		for nth := 1; nth <= probe.Count(op)-base[i]; nth++ {
			for _, keep := range []bool{false, true} {
				m := memory.NewFS()
				put(t, m, codexPath, orig)
				m.Inject(memory.Fault{Op: op, Nth: nth, Crash: true})
				_, err := harnessfs.Repair(context.Background(), m, codexPath, codex.Harness(), harnessfs.RepairOptions{})
				if err == nil && !m.Halted() {
					t.Fatalf("%s#%d: crash point never reached", op, nth)
				}
				if keep {
					m.CrashKeeping(func(_ string, u []byte) int { return len(u) })
				} else {
					m.Crash()
				}
				got, _ := m.DurableFile(codexPath)
				if !bytes.Equal(got, orig) && !bytes.Equal(got, prefix) {
					t.Fatalf("%s#%d keep=%v: file is neither the original nor cut: %d bytes", op, nth, keep, len(got))
				}
				res, err := harnessfs.Repair(context.Background(), m, codexPath, codex.Harness(), harnessfs.RepairOptions{})
				if err != nil {
					t.Fatalf("%s#%d: repair after reboot: %v", op, nth, err)
				}
				got, _ = m.DurableFile(codexPath)
				if !bytes.Equal(got, prefix) {
					t.Fatalf("%s#%d: after the second repair %d bytes", op, nth, len(got))
				}
				if res.Action == harnessfs.RepairCut {
					if kept, _ := m.DurableFile(res.Evidence); !bytes.Equal(kept, orig[len(prefix):]) {
						t.Fatalf("%s#%d: evidence %q", op, nth, kept)
					}
				}
				points++
			}
		}
	}
	t.Logf("%d crash points", points)
}

// braces decodes every {…} on a line as one event; an unclosed one is an
// error after the events before it.
type braces struct{}

func (braces) Name() string          { return "braces" }
func (braces) Stream() events.Stream { return "test" }
func (braces) DecodeLine(dst []events.Event, l events.Line) ([]events.Event, error) {
	s := string(l.Bytes)
	for len(s) > 0 {
		end := strings.IndexByte(s, '}')
		if s[0] != '{' || end < 0 {
			return dst, errors.New("not an object")
		}
		dst = append(dst, events.Event{Pos: l.Pos})
		s = s[end+1:]
	}
	return dst, nil
}
