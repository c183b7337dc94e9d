package harnessfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Errors, classified with errors.Is.
var (
	// ErrInvalidID: a session id that is not a plain id (letters, digits,
	// '-', '_'; at most 128 bytes). Ids arrive from command lines and
	// other programs; one holding '/', "..", NUL or a glob is refused before
	// it reaches a path.
	ErrInvalidID = errors.New("invalid session id")
	// ErrNotFound: no session with that id under the root.
	ErrNotFound = errors.New("session not found")
	// ErrAmbiguous: more than one file claims the id.
	ErrAmbiguous = errors.New("session id is ambiguous")
)

// Session is one session file found under a harness's root.
type Session struct {
	Harness string // "codex" or "claude"
	ID      string
	// Path is the file, under the root; Archived marks Codex's
	// archived_sessions.
	Path     string
	Archived bool
	// Project is the Claude Code project directory name (the sanitized
	// workspace) the file sits in.
	Project string
}

// Listing is a discovery result: the sessions found, and every link that was
// not followed (a symlink anywhere below the root is skipped, whatever it
// points at: a link out of the root would let the root's owner — or anyone
// who can write there — point tailproof at any file).
type Listing struct {
	Sessions []Session
	Skipped  []string
}

// CheckID refuses a session id that is not a plain id (ErrInvalidID), as
// every lookup here does before the id reaches a path.
func CheckID(id string) error { return validID(id) }

func validID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("harnessfs: %w: %q", ErrInvalidID, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("harnessfs: %w: %q", ErrInvalidID, id)
		}
	}
	return nil
}

// entries lists dir's entries in name order, splitting off symlinks (and
// anything that is neither a file nor a directory: FIFOs, sockets,
// devices) into skipped. A missing dir is an empty listing.
func entries(fsys vfs.FS, dir string, l *Listing) (files, dirs []string, err error) {
	es, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("harnessfs: %w", err)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Name() < es[j].Name() })
	for _, e := range es {
		p := filepath.Join(dir, e.Name())
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			l.Skipped = append(l.Skipped, p+" (symlink)")
		case t.IsDir():
			dirs = append(dirs, e.Name())
		case t.IsRegular():
			files = append(files, e.Name())
		default:
			l.Skipped = append(l.Skipped, p+" (not a regular file)")
		}
	}
	return files, dirs, nil
}

// byID picks the one session of l named id.
func byID(l Listing, harness, id string) (Session, error) {
	var matches []Session
	for _, s := range l.Sessions {
		if s.ID == id {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return Session{}, fmt.Errorf("harnessfs: %s %s: %w", harness, id, ErrNotFound)
	case 1:
		return matches[0], nil
	}
	paths := make([]string, len(matches))
	for i, m := range matches {
		paths[i] = m.Path
	}
	return Session{}, fmt.Errorf("harnessfs: %s %s: %w: %s", harness, id, ErrAmbiguous, strings.Join(paths, ", "))
}

// Env is how the layouts read the environment: os.Getenv in production, a
// map in tests.
type Env func(string) string
