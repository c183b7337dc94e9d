package harnessfs

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// DSH is the layout of dsh session logs under the root its persistence is
// configured with (dsh has no default root: `{ root }` is required). Two
// layouts share a root's shape, and a root may hold either:
//
//	v1 (dsh's own backend):        <root>/<bucket>/<EncodeSegment(id)>.jsonl
//	    bucket "cwd-" + sha256(cwd)[:12], or "_no-cwd" (dshlog.Bucket)
//	v0 (dsh-session-persistence-jsonl 0.1.0-rc.8):
//	    <root>/<project>/<EncodeSegment(id)>/session.jsonl.zstd (or session.jsonl)
//	    project "--" + projectKey(cwd) + "--", or "_no-cwd" (dshlog.ProjectKey)
//
// A session id reaches a path only through dshlog.EncodeSegment, dsh's own
// injective mapping onto one safe segment ("/" and "\" escaped, "." and ".."
// spelled out), so no id names a file outside its directory. Discovery lists
// directories instead of opening guessed paths, and never follows a link: a
// symlink at any level (a bucket, a v0 session directory, a log) is skipped
// and reported, whatever it points at.
type DSH struct {
	Root string
}

// MaxDSHSegment bounds an encoded id: one path segment, within the 255
// bytes a file name may have on every file system dsh runs on (with room
// for ".jsonl"); a longer id could not have been written.
const MaxDSHSegment = 249

// DSHSegment is the one directory entry name id's log uses (EncodeSegment),
// or ErrInvalidID for an id dsh could not have written: empty, not UTF-8 (a
// lone surrogate's WTF-8 form aside), or longer than MaxDSHSegment encoded.
func DSHSegment(id string) (string, error) {
	seg, err := dshlog.EncodeSegment(id)
	if err != nil {
		return "", fmt.Errorf("harnessfs: %w: %w", ErrInvalidID, err)
	}
	if len(seg) > MaxDSHSegment {
		return "", fmt.Errorf("harnessfs: %w: dsh id encodes to %d bytes, more than one path segment holds", ErrInvalidID, len(seg))
	}
	return seg, nil
}

// ByID lists every log of session id under the root, in any bucket or
// project directory, v1 and v0 alike (more than one is ambiguous for the
// caller to refuse).
func (d DSH) ByID(fsys vfs.FS, id string) (Listing, error) {
	return d.find(fsys, id, nil)
}

// ByWorkspace lists the logs of session id written for workspace cwd: the
// v1 bucket and the v0 project directory cwd names.
func (d DSH) ByWorkspace(fsys vfs.FS, cwd, id string) (Listing, error) {
	key, err := dshlog.ProjectKey(cwd)
	if err != nil {
		return Listing{}, fmt.Errorf("harnessfs: workspace %q: %w", cwd, err)
	}
	return d.find(fsys, id, map[string]bool{dshlog.Bucket(&cwd): true, key: true})
}

// find looks for id's v1 log and v0 session directory in every directory
// of the root (only those in dirs, when dirs is set).
func (d DSH) find(fsys vfs.FS, id string, dirs map[string]bool) (Listing, error) {
	var l Listing
	seg, err := DSHSegment(id)
	if err != nil {
		return l, err
	}
	inScope := func(name string) bool { return dirs == nil || dirs[name] }
	_, subdirs, err := entriesOf(fsys, d.Root, inScope, &l)
	if err != nil {
		return l, err
	}
	isOwn := func(name string) bool { return name == seg || name == seg+".jsonl" }
	isLog := func(name string) bool { return name == dshlog.V0ZstdName || name == dshlog.V0RawName }
	for _, sub := range subdirs {
		if !inScope(sub) {
			continue
		}
		dir := filepath.Join(d.Root, sub)
		files, sessionDirs, err := entriesOf(fsys, dir, isOwn, &l)
		if err != nil {
			return l, err
		}
		for _, f := range files {
			if f == seg+".jsonl" {
				l.Sessions = append(l.Sessions, Session{Harness: "dsh", ID: id, Path: filepath.Join(dir, f), Project: sub})
			}
		}
		for _, s := range sessionDirs {
			if s != seg {
				continue
			}
			sdir := filepath.Join(dir, s)
			logs, _, err := entriesOf(fsys, sdir, isLog, &l)
			if err != nil {
				return l, err
			}
			for _, f := range logs {
				if isLog(f) {
					l.Sessions = append(l.Sessions, Session{Harness: "dsh", ID: id, Path: filepath.Join(sdir, f), Project: sub})
				}
			}
		}
	}
	return l, nil
}

// entriesOf is entries for one directory of the search, reporting only the
// skipped entries whose names could have led to the session (keep): a
// bucket full of other sessions' links is not this lookup's business.
func entriesOf(fsys vfs.FS, dir string, keep func(name string) bool, l *Listing) (files, dirs []string, err error) {
	var own Listing
	files, dirs, err = entries(fsys, dir, &own)
	for _, s := range own.Skipped {
		// entries reports "<dir>/<name> (why)".
		name, _, _ := strings.Cut(strings.TrimPrefix(s, dir+string(filepath.Separator)), " (")
		if keep(name) {
			l.Skipped = append(l.Skipped, s)
		}
	}
	return files, dirs, err
}
