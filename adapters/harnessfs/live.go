package harnessfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// ErrWriterLive: the harness's own evidence says the session's writer may
// still be running, so nothing may be decided as if it had died.
var ErrWriterLive = errors.New("the session's writer may still be running")

// ProcessAlive reports whether a process with this pid exists. The default,
// Alive, asks the kernel (kill with signal 0); tests pass their own.
type ProcessAlive func(pid int) bool

// Alive is ProcessAlive on this machine: a process exists when signal 0 can
// be sent to it, or when it exists but belongs to someone else (EPERM).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LiveWriter is a process the harness recorded as writing a session.
type LiveWriter struct {
	PID      int
	PIDFile  string
	Session  string
	Workdir  string
	Started  int64 // startedAt, milliseconds, as the harness wrote it
	Evidence string
}

// ClaudeWriters returns the live processes Claude Code's own pid files say
// are running session id. Claude Code 2.1.328 registers each interactive
// process as <config>/sessions/<pid>.json ({pid, sessionId, cwd, startedAt,
// procStart, …}), rewrites sessionId when the process moves to another
// session (/resume, /clear), and removes the file on exit — so a crash
// leaves the file behind, and only a pid that is still alive counts. A pid
// the kernel has since given to another program also counts: a false
// "may be running" costs a retry, a false "gone" could cost a wrong verdict.
// Files that are links, not regular, over 64 KiB or not JSON are skipped.
func ClaudeWriters(fsys vfs.FS, configDir, id string, alive ProcessAlive) ([]LiveWriter, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	if alive == nil {
		alive = Alive
	}
	dir := filepath.Join(configDir, "sessions")
	var l Listing
	files, _, err := entries(fsys, dir, &l)
	if err != nil {
		return nil, err
	}
	var out []LiveWriter
	for _, name := range files {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(dir, name)
		var rec struct {
			PID       int    `json:"pid"`
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			StartedAt int64  `json:"startedAt"`
		}
		b, err := readSmall(fsys, p, 64<<10)
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.SessionID != id {
			continue
		}
		if alive(rec.PID) {
			out = append(out, LiveWriter{PID: rec.PID, PIDFile: p, Session: id, Workdir: rec.Cwd, Started: rec.StartedAt,
				Evidence: fmt.Sprintf("%s names session %s and process %d is alive", p, id, rec.PID)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// ClaudeConfigOf returns the Claude Code configuration directory a
// transcript at path belongs to (<config>/projects/<project>/<id>.jsonl),
// and false for a file outside that layout (a copy elsewhere), whose writer
// tailproof has no way to look up.
func ClaudeConfigOf(path string) (string, bool) {
	projects := filepath.Dir(filepath.Dir(path))
	if filepath.Base(projects) != "projects" {
		return "", false
	}
	return filepath.Dir(projects), true
}

// WriterCheck is the liveness check reconcile and repair run for one
// session file of a harness: Claude Code's pid files when the file sits in
// Claude Code's layout; nothing for Codex, which leaves no per-session lock
// or pid file (its rollout writer opens the file with append and takes no
// lock, recorder.rs @b505ee80). It returns an error wrapping ErrWriterLive
// naming the evidence, or nil when no evidence of a live writer exists.
func WriterCheck(fsys vfs.FS, harness, path string, alive ProcessAlive) error {
	if harness != "claude" {
		return nil
	}
	cfg, ok := ClaudeConfigOf(path)
	if !ok {
		return nil
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if validID(id) != nil {
		return nil
	}
	ws, err := ClaudeWriters(fsys, cfg, id, alive)
	if err != nil {
		return err
	}
	if len(ws) > 0 {
		return fmt.Errorf("harnessfs: %w: %s", ErrWriterLive, ws[0].Evidence)
	}
	return nil
}

func readSmall(fsys vfs.FS, p string, max int64) ([]byte, error) {
	f, err := fsys.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > max {
		return nil, fs.ErrInvalid
	}
	return io.ReadAll(io.LimitReader(f, max))
}
