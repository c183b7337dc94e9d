package harnessfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/codex"
)

// Claude Code 2.1.328 registers each process as <config>/sessions/<pid>.json
// and removes the file on exit: a file left by a crash names a dead pid,
// which is no evidence; one whose pid lives refuses.
func TestWriterCheckReadsClaudePidFiles(t *testing.T) {
	m := memory.NewFS()
	put(t, m, claudePath, whole(claudeLines))
	sessions := "/h/.claude/sessions"
	put(t, m, filepath.Join(sessions, "4242.json"), []byte(`{"pid":4242,"sessionId":"5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4","cwd":"/w","startedAt":1796029200000,"procStart":"123","kind":"interactive"}`))
	put(t, m, filepath.Join(sessions, "77.json"), []byte(`{"pid":77,"sessionId":"other-session","cwd":"/w"}`))
	put(t, m, filepath.Join(sessions, "junk.json"), []byte(`{"pid":`))
	alive := map[int]bool{}
	probe := func(pid int) bool { return alive[pid] }

	if err := harnessfs.WriterCheck(m, "claude", claudePath, probe); err != nil {
		t.Fatalf("a stale pid file is no evidence: %v", err)
	}
	alive[77] = true
	if err := harnessfs.WriterCheck(m, "claude", claudePath, probe); err != nil {
		t.Fatalf("another session's live process: %v", err)
	}
	alive[4242] = true
	if err := harnessfs.WriterCheck(m, "claude", claudePath, probe); !errors.Is(err, harnessfs.ErrWriterLive) {
		t.Fatalf("live writer: %v", err)
	}
	// A copy outside Claude Code's layout has no pid files to consult.
	put(t, m, "/tmp/copy.jsonl", whole(claudeLines))
	if err := harnessfs.WriterCheck(m, "claude", "/tmp/copy.jsonl", probe); err != nil {
		t.Fatalf("copy: %v", err)
	}
	// Codex leaves no lock or pid file to read.
	if err := harnessfs.WriterCheck(m, "codex", codexPath, probe); err != nil {
		t.Fatalf("codex: %v", err)
	}
}

func TestAliveSeesThisProcess(t *testing.T) {
	if !harnessfs.Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if harnessfs.Alive(-1) || harnessfs.Alive(0) {
		t.Fatal("non-positive pids are never alive")
	}
}

func TestSidecarRefusesNonFiles(t *testing.T) {
	m := memory.NewFS()
	put(t, m, codexPath, whole(codexLines))
	m.MkdirAll(harnessfs.SidecarPath(codexPath), 0o700)
	s := harnessfs.NewSidecar(m, codexPath)
	if err := s.AppendLedger(t.Context(), "", []byte(`{"v":1}`)); !errors.Is(err, harnessfs.ErrNotRegular) {
		t.Fatalf("sidecar is a directory: %v", err)
	}
	s = harnessfs.NewSidecar(m, "/h/missing.jsonl")
	if err := s.AppendLedger(t.Context(), "", []byte(`{"v":1}`)); err == nil {
		t.Fatal("a sidecar was created for a missing session file")
	}
}

// On the real filesystem a link planted where the sidecar, its lock or the
// session file should be is never written through.
func TestSidecarAndRepairRefuseLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o600)
	session := filepath.Join(dir, "s.jsonl")
	os.WriteFile(session, whole(codexLines)[:300], 0o600)
	for _, link := range []string{harnessfs.SidecarPath(session), harnessfs.SidecarPath(session) + ".lock"} {
		if err := os.Symlink(victim, link); err != nil {
			t.Skip(err)
		}
		err := harnessfs.NewSidecar(vfs.OS, session).AppendLedger(t.Context(), "", []byte(`{"v":1}`))
		if !errors.Is(err, harnessfs.ErrNotRegular) {
			t.Errorf("%s: %v", filepath.Base(link), err)
		}
		os.Remove(link)
	}
	linked := filepath.Join(dir, "l.jsonl")
	os.Symlink(session, linked)
	if _, err := harnessfs.Repair(t.Context(), vfs.OS, linked, codex.Harness(), harnessfs.RepairOptions{}); !errors.Is(err, harnessfs.ErrNotRegular) {
		t.Errorf("repair through a link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Fatalf("the victim was written: %q", b)
	}
}
