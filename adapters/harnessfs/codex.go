package harnessfs

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/codex"
)

// Codex is the layout of Codex CLI's session files: $CODEX_HOME (default
// ~/.codex), sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl
// for live threads and archived_sessions/rollout-…-<uuid>.jsonl, flat, for
// archived ones (codex-rs/rollout/src/recorder.rs precompute_log_file_info
// @b505ee80; the date is local time and ':' becomes '-').
type Codex struct{ Home string }

// CodexHome resolves Codex's root: $CODEX_HOME, else <home>/.codex.
func CodexHome(env Env, home string) Codex {
	if h := env("CODEX_HOME"); h != "" {
		return Codex{Home: h}
	}
	return Codex{Home: filepath.Join(home, ".codex")}
}

// Sessions lists every rollout file, live then archived, in path order.
func (c Codex) Sessions(fsys vfs.FS) (Listing, error) {
	var l Listing
	root := filepath.Join(c.Home, "sessions")
	_, years, err := entries(fsys, root, &l)
	if err != nil {
		return l, err
	}
	for _, y := range years {
		_, months, err := entries(fsys, filepath.Join(root, y), &l)
		if err != nil {
			return l, err
		}
		for _, m := range months {
			_, days, err := entries(fsys, filepath.Join(root, y, m), &l)
			if err != nil {
				return l, err
			}
			for _, d := range days {
				dir := filepath.Join(root, y, m, d)
				files, _, err := entries(fsys, dir, &l)
				if err != nil {
					return l, err
				}
				c.add(&l, dir, files, false)
			}
		}
	}
	// Older versions wrote rollouts directly under sessions/.
	files, _, err := entries(fsys, root, &l)
	if err != nil {
		return l, err
	}
	c.add(&l, root, files, false)
	arch := filepath.Join(c.Home, "archived_sessions")
	files, _, err = entries(fsys, arch, &l)
	if err != nil {
		return l, err
	}
	c.add(&l, arch, files, true)
	return l, nil
}

func (Codex) add(l *Listing, dir string, files []string, archived bool) {
	for _, f := range files {
		if id, ok := codexID(f); ok {
			l.Sessions = append(l.Sessions, Session{Harness: "codex", ID: id, Path: filepath.Join(dir, f), Archived: archived})
		}
	}
}

// codexID is the thread id of a rollout file name: the uuid that ends
// "rollout-<timestamp>-<uuid>.jsonl" (older names carry no timestamp).
func codexID(name string) (string, bool) {
	if !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
		return "", false
	}
	stem := strings.TrimSuffix(name, ".jsonl")
	if len(stem) < len("rollout-")+36 {
		return "", false
	}
	id := stem[len(stem)-36:]
	if validID(id) != nil || strings.Count(id, "-") != 4 {
		return "", false
	}
	return id, true
}

// ByID finds the rollout of thread id, live or archived.
func (c Codex) ByID(fsys vfs.FS, id string) (Session, error) {
	if err := validID(id); err != nil {
		return Session{}, err
	}
	l, err := c.Sessions(fsys)
	if err != nil {
		return Session{}, err
	}
	return byID(l, "codex", id)
}

// ByWorkspace lists the sessions whose first session_meta names cwd (Codex
// takes the first session_meta as canonical; its cwd is the workspace).
// Files whose first line is not a session_meta are not listed.
func (c Codex) ByWorkspace(fsys vfs.FS, cwd string) (Listing, error) {
	l, err := c.Sessions(fsys)
	if err != nil {
		return l, err
	}
	cwd = filepath.Clean(cwd)
	var keep []Session
	for _, s := range l.Sessions {
		got, err := firstCwd(fsys, s.Path)
		if err != nil {
			return l, err
		}
		if got != "" && filepath.Clean(got) == cwd {
			keep = append(keep, s)
		}
	}
	l.Sessions = keep
	return l, nil
}

// metaLineLimit bounds the first line read: session_meta can carry the base
// instructions, which run to tens of KiB, never to this.
const metaLineLimit = 4 << 20

func firstCwd(fsys vfs.FS, path string) (string, error) {
	f, err := fsys.OpenFile(path, 0, 0)
	if err != nil {
		return "", fmt.Errorf("harnessfs: %w", err)
	}
	defer f.Close()
	var first []byte
	for line, err := range events.Lines(io.LimitReader(f, metaLineLimit+1), metaLineLimit) {
		if err != nil {
			return "", fmt.Errorf("harnessfs: %s: %w", path, err)
		}
		if line.TooLong || len(bytes.TrimSpace(line.Bytes)) == 0 {
			return "", nil
		}
		first = append(first, line.Bytes...)
		break
	}
	evs, err := codex.Codec{}.DecodeLine(nil, events.Line{Bytes: first, Terminated: true})
	if err != nil || len(evs) == 0 {
		return "", nil
	}
	r := evs[0].Body.(*codex.Record)
	if r.Type != codex.ItemSessionMeta || r.Meta == nil {
		return "", nil
	}
	return r.Meta.Cwd, nil
}
