package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// Session is a session's files as the flags named them, opened under the
// CLI's file policy (ADR 0022): every read and write goes through a
// vfs.Rooted FS on the directories the user named, so nothing is read or
// written through a symbolic link out of them, and every file is checked to
// be a regular file before it is read.
type Session struct {
	Store adapters.Store
	// ID is the session id in Qwen's layout ("" for explicit files).
	ID string
	// Ledger and Transcript start as {Path, Present}; commands fill in the
	// rest of the report as they read.
	Ledger, Transcript FileReport
	fsys               *vfs.Rooted
}

// Close releases the roots.
func (s *Session) Close() error { return s.fsys.Close() }

// FS is the confined filesystem the session's store works on.
func (s *Session) FS() vfs.FS { return s.fsys }

// OpenLedger and OpenTranscript read the session's files through its store.
func (s *Session) OpenLedger(ctx context.Context) (io.ReadCloser, error) {
	return s.Store.OpenLedger(ctx, s.ID)
}

func (s *Session) OpenTranscript(ctx context.Context) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return s.Store.OpenTranscript(ctx, s.ID) }
}

// Within opens the directories holding the named files (and any extra
// directories) as the roots of a confined FS.
func Within(paths ...string) (*vfs.Rooted, error) {
	var dirs []string
	for _, p := range paths {
		if p != "" {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	fsys, err := vfs.Within(dirs...)
	if err != nil {
		return nil, WithCode(Input, err)
	}
	return fsys, nil
}

// CheckNamed checks a file the user named with flag: it must exist, be a
// regular file, and not be a symbolic link out of its directory.
func CheckNamed(fsys vfs.FS, flag, path string) error {
	st, err := fsys.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && path == "-":
		return Inputf("%s -: standard input cannot be read; tailproof needs a regular file (it reads a file more than once), so save the stream to a file and name that", flag)
	case errors.Is(err, fs.ErrNotExist) && linkOnDisk(path) != "":
		// A link the root cannot resolve but the system has: a link to a
		// pipe or a process's descriptor (/dev/fd/N from <(cmd)), or to a
		// path that is gone.
		return Inputf("%s %s is a symbolic link to %q, which is not a regular file tailproof can reach (a pipe, a descriptor or a missing path); tailproof reads a file more than once, so save the stream to a file and name that", flag, path, linkOnDisk(path))
	case errors.Is(err, fs.ErrNotExist):
		return Inputf("%s %s does not exist", flag, path)
	case errors.Is(err, vfs.ErrOutsideRoot):
		return Inputf("%s %s is a symbolic link leading out of %s: tailproof reads and writes only inside the directories it is given; name the file itself", flag, path, filepath.Dir(path))
	case err != nil:
		return WithCode(Input, fmt.Errorf("%s %s: %w", flag, path, err))
	case !st.Mode().IsRegular():
		return Inputf("%s %s is %s, not a regular file", flag, path, vfs.Describe(st.Mode()))
	}
	return nil
}

// OpenFiles opens --ledger and --transcript (either may be "" when the
// command does without it). A named file must exist: a mistyped path is an
// error, not an empty ledger.
func OpenFiles(ledgerPath, transcriptPath string) (*Session, error) {
	fsys, err := Within(ledgerPath, transcriptPath)
	if err != nil {
		return nil, err
	}
	s := &Session{fsys: fsys, Ledger: FileReport{Path: ledgerPath, First: []Position{}}, Transcript: FileReport{Path: transcriptPath, First: []Position{}}}
	for _, f := range []struct {
		flag string
		rep  *FileReport
	}{{"--ledger", &s.Ledger}, {"--transcript", &s.Transcript}} {
		if f.rep.Path == "" {
			continue
		}
		if err := CheckNamed(fsys, f.flag, f.rep.Path); err != nil {
			fsys.Close()
			return nil, err
		}
		f.rep.Present = true
	}
	s.Store = jsonl.NewFilesStore(fsys, ledgerPath, transcriptPath)
	if ledgerPath == "" {
		s.Store = noLedger{s.Store}
		s.Ledger.Note = NoLedgerNote
	}
	return s, nil
}

// NoLedgerNote is the ledger report's note when no --ledger was named.
const NoLedgerNote = "no --ledger was named, so no prompt can be left in flight and nothing is appended; name Qwen's prompt ledger (<session>.ledger.jsonl beside the transcript) with --ledger, or the session with --cwd/--session"

// ErrNoLedger is what an append through a session opened without a ledger
// returns: there is no file to append to, and none is invented.
var ErrNoLedger = errors.New("no ledger was named (--ledger): nothing can be appended")

// noLedger is a session opened with a transcript and no ledger: its ledger
// reads as empty (nothing admitted, nothing in flight), as a session in
// Qwen's layout that never had one does, and it refuses every append.
type noLedger struct{ adapters.Store }

func (noLedger) OpenLedger(ctx context.Context, _ string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader("")), nil
}

func (noLedger) OpenLedgerTail(ctx context.Context, _ string, _ int64) (io.ReadCloser, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	return io.NopCloser(strings.NewReader("")), false, nil
}

func (noLedger) AppendLedger(context.Context, string, []byte) error {
	return WithCode(Write, ErrNoLedger)
}

// RuntimeDir is --qwen-runtime, else Qwen's own default from the
// environment ($QWEN_RUNTIME_DIR, $QWEN_HOME, ~/.qwen).
func RuntimeDir(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	home, _ := os.UserHomeDir()
	d, err := jsonl.ResolveRuntimeDir(os.Getenv, home)
	if err != nil {
		return "", WithCode(Usage, fmt.Errorf("%w: pass --qwen-runtime", err))
	}
	return d, nil
}

// OpenQwen opens session id of workspace cwd in Qwen's runtime directory.
// The session must exist: an id with neither a transcript nor a ledger is
// an unknown session (or an archived one, which the message says). A
// session without a ledger is valid — it never had a prompt admitted
// through one — and its report says so.
func OpenQwen(runtimeDir, cwd, id string) (*Session, error) {
	if err := jsonl.CheckSessionID(id); err != nil {
		return nil, Usagef("--session: %v", err)
	}
	fsys, err := vfs.Within(runtimeDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, Inputf("the Qwen runtime directory %s does not exist (--qwen-runtime, else $QWEN_RUNTIME_DIR, $QWEN_HOME or ~/.qwen)", runtimeDir)
	case err != nil:
		return nil, WithCode(Input, fmt.Errorf("the Qwen runtime directory: %w", err))
	}
	layout := jsonl.NewQwenLayout(runtimeDir, cwd)
	s := &Session{fsys: fsys, ID: id, Store: jsonl.NewQwenStore(fsys, layout)}
	fail := func(err error) (*Session, error) { fsys.Close(); return nil, err }
	chats := layout.ChatsDir(jsonl.Active)
	if st, err := fsys.Stat(chats); err != nil || !st.IsDir() {
		if errors.Is(err, vfs.ErrOutsideRoot) {
			return fail(Inputf("%s is a symbolic link leading out of the runtime directory %s: tailproof reads and writes only inside it", chats, runtimeDir))
		}
		return fail(Inputf("unknown session %s: workspace %s has no sessions under %s (no directory %s)", id, cwd, runtimeDir, chats))
	}
	present := func(state jsonl.SessionState, role string) (FileReport, error) {
		p, _ := layout.TranscriptPath(id, state)
		if role == "ledger" {
			p, _ = layout.LedgerPath(id, state)
		}
		return CheckSessionFile(fsys, runtimeDir, role, p)
	}
	if s.Transcript, err = present(jsonl.Active, "transcript"); err != nil {
		return fail(err)
	}
	if s.Ledger, err = present(jsonl.Active, "ledger"); err != nil {
		return fail(err)
	}
	if !s.Transcript.Present && !s.Ledger.Present {
		at, _ := present(jsonl.Archived, "transcript")
		al, _ := present(jsonl.Archived, "ledger")
		if at.Present || al.Present {
			return fail(Inputf("session %s is archived (%s): unarchive it first", id, layout.ChatsDir(jsonl.Archived)))
		}
		return fail(Inputf("unknown session %s: neither %s nor %s exists", id, s.Transcript.Path, filepath.Base(s.Ledger.Path)))
	}
	if !s.Ledger.Present {
		s.Ledger.Note = "the session has no ledger (no prompt was admitted through one), so no prompt can be left in flight"
	}
	if !s.Transcript.Present {
		s.Transcript.Note = "the session has no transcript"
	}
	return s, nil
}

// CheckSessionFile checks one of a session's files in Qwen's runtime
// directory, as OpenQwen does for the session it opens: absent is a report
// without Present; a symbolic link out of runtimeDir, or anything but a
// regular file, is an input error naming role ("ledger", "transcript").
func CheckSessionFile(fsys vfs.FS, runtimeDir, role, p string) (FileReport, error) {
	st, err := fsys.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return FileReport{Path: p, First: []Position{}}, nil
	case errors.Is(err, vfs.ErrOutsideRoot):
		return FileReport{}, Inputf("%s %s is a symbolic link leading out of the runtime directory %s: tailproof reads and writes only inside it", role, p, runtimeDir)
	case err != nil:
		return FileReport{}, WithCode(Input, fmt.Errorf("%s %s: %w", role, p, err))
	case !st.Mode().IsRegular():
		return FileReport{}, Inputf("%s %s is %s, not a regular file", role, p, vfs.Describe(st.Mode()))
	}
	return FileReport{Path: p, Present: true, First: []Position{}}, nil
}

// OpenNamed opens a file the user named with flag, under the file policy:
// it must exist and be a regular file inside its directory. The caller
// reads it (with its own bound) and closes it.
func OpenNamed(flag, path string) (io.ReadCloser, error) {
	fsys, err := Within(path)
	if err != nil {
		return nil, err
	}
	if err := CheckNamed(fsys, flag, path); err != nil {
		fsys.Close()
		return nil, err
	}
	f, err := vfs.OpenRegular(fsys, path, os.O_RDONLY, 0)
	if err != nil {
		fsys.Close()
		return nil, WithCode(Input, fmt.Errorf("%s %s: %w", flag, path, err))
	}
	return namedFile{f, fsys}, nil
}

// namedFile closes the file, then the directory it was opened in.
type namedFile struct {
	vfs.File
	dir io.Closer
}

func (n namedFile) Close() error { return errors.Join(n.File.Close(), n.dir.Close()) }

// CreateNamed creates (or truncates) an output file the user named with
// flag: a regular file in its directory, never written through a symbolic
// link out of it, nor into a FIFO or device. Failures are write errors.
func CreateNamed(flag, path string) (vfs.File, error) {
	fsys, err := vfs.Within(filepath.Dir(path))
	if err != nil {
		return nil, WithCode(Write, fmt.Errorf("%s %s: %w", flag, path, err))
	}
	defer fsys.Close()
	f, err := vfs.OpenRegular(fsys, path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, WithCode(Write, fmt.Errorf("%s %s: %w", flag, path, err))
	}
	return f, nil
}

// linkOnDisk is the target of the symbolic link at path, "" when path is
// not a link on disk: it tells a missing file from a link only the root's
// resolution cannot follow.
func linkOnDisk(path string) string {
	target, err := os.Readlink(path)
	if err != nil {
		return ""
	}
	return target
}
