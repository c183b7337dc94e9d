package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/events"
)

// Harness sessions in the hostile fixture (testdata/hostile/harness.txt):
//
//	$D/codex                 a CODEX_HOME: sessions/2026/11/30/rollout-…-<codexID>.jsonl
//	                         (the crashed session, torn tail), archived_sessions/
//	                         rollout-…-<codexArch>.jsonl, and sessions/2026/11/29 a
//	                         link to $OUT/day holding rollout-…-<codexOut>.jsonl
//	$D/claude                a CLAUDE_CONFIG_DIR: projects/-w/<claudeID>.jsonl, a FIFO
//	                         projects/-w/<claudeFIFO>.jsonl, a link
//	                         projects/-w/<claudeOut>.jsonl to $OUT
//	                         (no sessions/: no Claude Code process registered there)
//	$D/claude-linked         a CLAUDE_CONFIG_DIR whose sessions/ (the pid files) is a
//	                         link to $OUT/pids: projects/-w/<claudeID>.jsonl
//	$D/h/torn.jsonl          the crashed Codex session (torn tail) outside any layout
//	$D/h/whole.jsonl         the Codex session, its last record missing only its newline
//	$D/h/glued.jsonl         the same, that last line glued to a torn record
//	$D/h/claude-out.jsonl    a link to $OUT's Claude transcript
//	$D/h/fifo.jsonl          a FIFO
//	$D/dsh-v0/--home-me-proj--/sess-01/session.jsonl.zstd  the bundled dsh v0 log;
//	                         sess-02 its first half (a torn frame); sess-03 a raw
//	                         session.jsonl whose header is not one
//	$D/dsh-v1/cwd-79903f0c2002/sess-01.jsonl  the crashed dsh example (cwd /proj) in a
//	                         v1 root; sess-09.jsonl beside it a link to $OUT, the
//	                         _no-cwd bucket a link to $OUT/dsh-bucket (sess-08), and
//	                         $D/dsh-v0/--home-me-proj--/sess-07 a link to a v0 log's directory
//	$S/huge-codex.jsonl      a Codex session with a line over the 64 MiB limit
const (
	codexID    = "0199c0de-0000-7000-8000-000000000001"
	codexArch  = "0199c0de-0000-7000-8000-0000000000a1"
	codexOut   = "0199c0de-0000-7000-8000-0000000000b1"
	claudeID   = "5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4"
	claudeFIFO = "5e9203a5-ffbc-40b3-a9a4-0000000000f1"
	claudeOut  = "5e9203a5-ffbc-40b3-a9a4-0000000000b1"
	// dshProjBucket is dsh's v1 bucket of workspace /proj.
	dshProjBucket = "cwd-79903f0c2002"
)

func (h *hostileTree) harnessFixtures(t *testing.T) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		must(err)
		return b
	}
	write := func(p string, b []byte) {
		must(os.MkdirAll(filepath.Dir(p), 0o700))
		must(os.WriteFile(p, b, 0o600))
	}
	link := func(target, p string) {
		must(os.MkdirAll(filepath.Dir(p), 0o700))
		must(os.Symlink(target, p))
	}
	fifo := func(p string) {
		must(os.MkdirAll(filepath.Dir(p), 0o700))
		must(syscall.Mkfifo(p, 0o600))
	}
	torn := read("../../testdata/turns/codex-crashed.jsonl")
	whole := read("../../testdata/turns/codex-session.jsonl")
	cl := read("../../testdata/turns/claude-session.jsonl")
	day := filepath.Join(h.d, "codex", "sessions", "2026", "11", "30")
	write(filepath.Join(day, "rollout-2026-11-30T09-00-00-"+codexID+".jsonl"), torn)
	write(filepath.Join(h.d, "codex", "archived_sessions", "rollout-2026-10-01T08-00-00-"+codexArch+".jsonl"), whole)
	write(filepath.Join(h.out, "day", "rollout-2026-11-29T08-00-00-"+codexOut+".jsonl"), whole)
	link(filepath.Join(h.out, "day"), filepath.Join(h.d, "codex", "sessions", "2026", "11", "29"))
	proj := filepath.Join(h.d, "claude", "projects", "-w")
	write(filepath.Join(proj, claudeID+".jsonl"), cl)
	fifo(filepath.Join(proj, claudeFIFO+".jsonl"))
	write(filepath.Join(h.out, claudeOut+".jsonl"), cl)
	link(filepath.Join(h.out, claudeOut+".jsonl"), filepath.Join(proj, claudeOut+".jsonl"))
	write(filepath.Join(h.d, "claude-linked", "projects", "-w", claudeID+".jsonl"), cl)
	must(os.MkdirAll(filepath.Join(h.out, "pids"), 0o700))
	link(filepath.Join(h.out, "pids"), filepath.Join(h.d, "claude-linked", "sessions"))
	write(filepath.Join(h.d, "h", "torn.jsonl"), torn)
	// The crashed session without its fragment: whole lines, the last one
	// missing only its newline; then that line glued to a torn record.
	cut := torn[:bytes.LastIndexByte(torn, '\n')]
	write(filepath.Join(h.d, "h", "whole.jsonl"), cut)
	write(filepath.Join(h.d, "h", "glued.jsonl"), append(append([]byte{}, cut...), `{"timestamp":"2026-11-30T09:09:00.000Z","type":"event_msg","payl`...))
	link(filepath.Join(h.out, claudeOut+".jsonl"), filepath.Join(h.d, "h", "claude-out.jsonl"))
	fifo(filepath.Join(h.d, "h", "fifo.jsonl"))
	z := read("../../examples/dsh/v0/--home-me-proj--/sess-01/session.jsonl.zstd")
	write(filepath.Join(h.d, "dsh-v0", "--home-me-proj--", "sess-01", "session.jsonl.zstd"), z)
	write(filepath.Join(h.d, "dsh-v0", "--home-me-proj--", "sess-02", "session.jsonl.zstd"), z[:len(z)/2])
	write(filepath.Join(h.d, "dsh-v0", "--home-me-proj--", "sess-03", "session.jsonl"), []byte("not a v0 header\n"))
	// dsh discovery (--session under --home): a v1 root holding the crashed
	// example in its /proj bucket, a link out of the root in its place for
	// sess-09, a linked _no-cwd bucket; a v0 session directory linked out.
	v1 := read("../../examples/dsh/crashed-session.jsonl")
	write(filepath.Join(h.d, "dsh-v1", dshProjBucket, "sess-01.jsonl"), v1)
	write(filepath.Join(h.out, "dsh-secret.jsonl"), v1)
	link(filepath.Join(h.out, "dsh-secret.jsonl"), filepath.Join(h.d, "dsh-v1", dshProjBucket, "sess-09.jsonl"))
	write(filepath.Join(h.out, "dsh-bucket", "sess-08.jsonl"), v1)
	link(filepath.Join(h.out, "dsh-bucket"), filepath.Join(h.d, "dsh-v1", "_no-cwd"))
	write(filepath.Join(h.out, "dsh-v0-sess", "session.jsonl.zstd"), z)
	link(filepath.Join(h.out, "dsh-v0-sess"), filepath.Join(h.d, "dsh-v0", "--home-me-proj--", "sess-07"))
	huge := filepath.Join(h.s, "huge-codex.jsonl")
	if _, err := os.Stat(huge); err != nil {
		b := append(append([]byte{}, whole...), bytes.Repeat([]byte("x"), events.DefaultMaxLineBytes+1)...)
		write(huge, append(append(b, '\n'), torn...))
	}
}

// TestHarnessLiveWriter: a Claude Code transcript whose pid file names a
// live process (this test's own) is "unavailable" (exit 5) for reconcile
// and repair, with the evidence in the message, and nothing is written;
// status reports the writer and decides nothing as if it had died.
func TestHarnessLiveWriter(t *testing.T) {
	cfg := t.TempDir()
	cl, err := os.ReadFile("../../testdata/turns/claude-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(cfg, "projects", "-w")
	path := filepath.Join(proj, claudeID+".jsonl")
	torn := append(append([]byte{}, cl...), `{"parentUuid":"a6","isSid`...)
	for _, w := range []struct {
		p string
		b []byte
	}{
		{path, torn},
		{filepath.Join(cfg, "sessions", strconv.Itoa(os.Getpid())+".json"),
			[]byte(`{"pid":` + strconv.Itoa(os.Getpid()) + `,"sessionId":"` + claudeID + `","cwd":"/w","startedAt":1796029200000}`)},
	} {
		if err := os.MkdirAll(filepath.Dir(w.p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.p, w.b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, cfg)
	for _, args := range [][]string{
		{"reconcile", "--harness", "claude", "--file", path, "--now", "1796029200000"},
		{"reconcile", "--harness", "claude", "--session", claudeID, "--home", cfg, "--now", "1796029200000"},
		{"repair", "--harness", "claude", "--file", path},
		{"repair", "--harness", "claude", "--session", claudeID, "--home", cfg, "--json"},
		{"replay", "--harness", "claude", "--file", path, "--writer-stopped"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != 5 || !strings.Contains(errb.String(), "is alive") || !strings.Contains(errb.String(), "nothing was written") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"status", "--harness", "claude", "--file", path, "--writer-stopped", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("status: exit %d: %s", code, errb.String())
	}
	var st harnessStatusJSON
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.WriterStopped || st.Writer == nil || st.Turn == nil || st.Turn.Verdict != "unknown" {
		t.Fatalf("status with a live writer: %s", out.String())
	}
	if d := diffSnapshots(before, snapshot(t, cfg)); d != "files: unchanged\n" {
		t.Fatal(d)
	}
}
