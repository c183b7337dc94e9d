package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// QwenStore is adapters.Store over Qwen Code's runtime directory: transcripts
// are read where Qwen writes them, and ledger lines are appended durably
// (fsync, directory fsync on create, cross-process lock, torn-tail seal) to
// the <id>.ledger.jsonl sidecar Qwen itself reads. It also moves a session
// between the active and archived states and removes it, keeping the ledger
// with its transcript as Qwen does.
type QwenStore struct {
	fs     vfs.FS
	layout QwenLayout
	active string // layout.ChatsDir(Active), built once

	mu      sync.Mutex
	writers map[string]*ledgerWriter // made at the first append (most stores only read)
	stats   stats
}

var _ adapters.Store = (*QwenStore)(nil)

// NewQwenStore returns a store over fsys (vfs.OS in production, a
// memory.FS in crash tests) for one project's layout.
func NewQwenStore(fsys vfs.FS, layout QwenLayout) *QwenStore {
	return &QwenStore{fs: fsys, layout: layout, active: activeChatsDir(layout)}
}

// activeDirs memoizes layout.ChatsDir(Active): a process opens stores over
// few layouts (the simulator, thousands of times over one), and SanitizeCwd
// plus the joins were a visible share of creating a store.
var activeDirs sync.Map // QwenLayout -> string

func activeChatsDir(l QwenLayout) string {
	if d, ok := activeDirs.Load(l); ok {
		return d.(string)
	}
	d := l.ChatsDir(Active)
	activeDirs.Store(l, d)
	return d
}

// activePath is layout's path of an active session's file with extension
// ext (the same checks as QwenLayout's, on the cached directory).
func (s *QwenStore) activePath(id, ext string) (string, error) {
	return sessionPathIn(s.active, id, ext)
}

// HasArchivedTranscript reports whether the session's transcript exists in
// the archived state (adapters.ArchiveStore).
func (s *QwenStore) HasArchivedTranscript(ctx context.Context, sessionID string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	p, err := s.layout.TranscriptPath(sessionID, Archived)
	if err != nil {
		return false, err
	}
	switch _, err := s.fs.Stat(p); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("jsonl: archived transcript %s: %w", p, err)
	}
}

// Layout is the layout the store was made with.
func (s *QwenStore) Layout() QwenLayout { return s.layout }

// FS is the filesystem the store works on.
func (s *QwenStore) FS() vfs.FS { return s.fs }

// ScanTranscripts lists the session ids whose transcripts are in a state's
// chats directory, sorted, by Qwen's SESSION_FILE_PATTERN — so a ledger
// (<id>.ledger.jsonl) or any other sidecar is never taken for a transcript.
// A missing directory lists nothing.
func (s *QwenStore) ScanTranscripts(ctx context.Context, state SessionState) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: scan transcripts: %w", err)
	}
	if state != Active && state != Archived {
		return nil, fmt.Errorf("jsonl: unknown session state %q", state)
	}
	entries, err := s.fs.ReadDir(s.layout.ChatsDir(state))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jsonl: scan transcripts: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() && IsTranscriptName(e.Name()) {
			ids = append(ids, strings.TrimSuffix(e.Name(), transcriptExt))
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Archive moves a session's transcript to archive/ and its ledger with it.
// When the transcript already exists in archive/ (an earlier archive that
// half-finished), Qwen's conflict resolution applies: the archived copy
// wins, and the active transcript and active ledger are deleted. The ledger
// move merges instead of clobbering when both ledgers exist: the active
// (newer) records are appended after the archived (older) ones. Ledger
// problems are warnings, as in Qwen: they are returned and do not undo the
// transcript move. err is set only when the transcript could not be moved.
func (s *QwenStore) Archive(ctx context.Context, sessionID string) (warnings []error, err error) {
	return s.move(ctx, sessionID, Active, Archived)
}

// Unarchive mirrors Archive: the archived transcript returns to the active
// directory, and on merge the stranded archived (older) ledger records are
// prepended before the active (newer) ones, so a settled prompt can never be
// made dangling again by a direction-blind merge (Qwen PR #10300, R9-1).
func (s *QwenStore) Unarchive(ctx context.Context, sessionID string) (warnings []error, err error) {
	return s.move(ctx, sessionID, Archived, Active)
}

func (s *QwenStore) move(ctx context.Context, id string, from, to SessionState) ([]error, error) {
	verb := "archive"
	if to == Active {
		verb = "unarchive"
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: %s: %w", verb, err)
	}
	srcT, err := s.layout.TranscriptPath(id, from)
	if err != nil {
		return nil, err
	}
	dstT, _ := s.layout.TranscriptPath(id, to)
	srcL, _ := s.layout.LedgerPath(id, from)
	dstL, _ := s.layout.LedgerPath(id, to)
	if _, err := s.fs.Stat(srcT); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("jsonl: %s %s: transcript %s: %w", verb, id, srcT, adapters.ErrNotFound)
		}
		return nil, fmt.Errorf("jsonl: %s %s: %w", verb, id, err)
	}
	unlock, err := s.lockBoth(id, true)
	if err != nil {
		return nil, fmt.Errorf("jsonl: %s %s: %w", verb, id, err)
	}
	defer unlock()

	var warnings []error
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Errorf(format, args...)) }

	if _, err := s.fs.Stat(dstT); err == nil {
		// Conflict: the transcript is in both states. The destination copy
		// wins; the source transcript and the source ledger go.
		if err := s.removeDurably(srcT); err != nil {
			return nil, fmt.Errorf("jsonl: %s %s: resolve conflict: %w", verb, id, err)
		}
		if err := s.removeDurably(srcL); err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn("jsonl: %s %s: failed to remove prompt ledger %s: %w", verb, id, srcL, err)
		}
		return warnings, nil
	}
	dstDir := filepath.Dir(dstT)
	if _, err := s.ensureDir(dstDir); err != nil {
		return nil, fmt.Errorf("jsonl: %s %s: %w", verb, id, err)
	}
	if err := s.fs.Rename(srcT, dstT); err != nil {
		return nil, fmt.Errorf("jsonl: %s %s: %w", verb, id, err)
	}
	if err := s.syncDirs(filepath.Dir(srcT), dstDir); err != nil {
		return nil, fmt.Errorf("jsonl: %s %s: transcript moved but not yet durable: %w", verb, id, err)
	}
	if err := s.moveLedger(srcL, dstL, to == Archived); err != nil {
		warn("jsonl: %s %s: failed to move prompt ledger from %s to %s: %w", verb, id, srcL, dstL, err)
	}
	return warnings, nil
}

// lockBoth takes the active then the archived ledger lock (always in that
// order, so an archive and an unarchive cannot deadlock), excluding every
// appender while ledgers move. Without create, a state whose directory does
// not exist is skipped: there is no ledger there to protect, and removing a
// session must not create directories.
func (s *QwenStore) lockBoth(id string, create bool) (func(), error) {
	var held []vfs.Unlocker
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			_ = held[i].Unlock()
		}
	}
	for _, st := range []SessionState{Active, Archived} {
		p, err := s.layout.ledgerLockPath(id, st)
		if err != nil {
			release()
			return nil, err
		}
		if !create {
			if _, err := s.fs.Stat(filepath.Dir(p)); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		} else if _, err := s.ensureDir(filepath.Dir(p)); err != nil {
			release()
			return nil, err
		}
		l, err := s.fs.Lock(p)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, l)
	}
	return release, nil
}

// moveLedger is Qwen's moveLedgerSidecar, made durable. A missing source is
// nothing to do; a missing destination is a rename; otherwise the two merge
// without either being lost — archive appends the source after the
// destination's records, unarchive prepends it — and the source is removed
// only after the merged file is durable.
func (s *QwenStore) moveLedger(src, dst string, appendToDst bool) error {
	srcData, err := s.readAll(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := s.ensureDir(filepath.Dir(dst)); err != nil {
		return err
	}
	if _, err := s.fs.Stat(dst); errors.Is(err, fs.ErrNotExist) {
		if err := s.fs.Rename(src, dst); err != nil {
			return err
		}
		return s.syncDirs(filepath.Dir(src), filepath.Dir(dst))
	}
	if len(srcData) > 0 {
		payload := srcData
		if payload[len(payload)-1] != '\n' {
			payload = append(payload, '\n')
		}
		if appendToDst {
			if err := s.appendRaw(dst, append([]byte{'\n'}, payload...)); err != nil {
				return err
			}
		} else {
			dstData, err := s.readAll(dst)
			if err != nil {
				return err
			}
			merged := bytes.Clone(payload)
			if len(dstData) > 0 {
				merged = append(merged, '\n')
			}
			merged = append(merged, dstData...)
			if err := s.replaceAtomically(dst, merged); err != nil {
				return err
			}
		}
	}
	return s.removeDurably(src)
}

func (s *QwenStore) readAll(name string) ([]byte, error) {
	f, err := s.fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// appendRaw appends bytes and fsyncs them; callers hold the ledger lock.
func (s *QwenStore) appendRaw(name string, data []byte) error {
	f, err := s.fs.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	s.stats.fileSyncs.Add(1)
	return f.Sync()
}

// replaceAtomically writes data to a temporary sibling, fsyncs it, renames it
// over name and fsyncs the directory: a crash leaves the old or the new
// contents, never a mix.
func (s *QwenStore) replaceAtomically(name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := s.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		s.stats.fileSyncs.Add(1)
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = s.fs.Remove(tmp)
		return werr
	}
	if err := s.fs.Rename(tmp, name); err != nil {
		_ = s.fs.Remove(tmp)
		return err
	}
	return s.syncDirs(filepath.Dir(name))
}

func (s *QwenStore) removeDurably(name string) error {
	if err := s.fs.Remove(name); err != nil {
		return err
	}
	return s.syncDirs(filepath.Dir(name))
}

func (s *QwenStore) syncDirs(dirs ...string) error {
	var done []string
	for _, d := range dirs {
		if slices.Contains(done, d) {
			continue
		}
		done = append(done, d)
		s.stats.dirSyncs.Add(1)
		if err := s.fs.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// RemoveSession deletes a session's transcript and ledger in both states (so
// no orphan evidence is left) and tailproof's lock files. Missing files are
// not errors; every other failure is returned, joined.
func (s *QwenStore) RemoveSession(ctx context.Context, sessionID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jsonl: remove session: %w", err)
	}
	if err := CheckSessionID(sessionID); err != nil {
		return err
	}
	unlock, err := s.lockBoth(sessionID, false)
	if err != nil {
		return fmt.Errorf("jsonl: remove session %s: %w", sessionID, err)
	}
	var errs []error
	for _, st := range []SessionState{Active, Archived} {
		t, _ := s.layout.TranscriptPath(sessionID, st)
		l, _ := s.layout.LedgerPath(sessionID, st)
		for _, p := range []string{t, l} {
			if err := s.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	unlock()
	// The lock files go last, after the lock is released: removing a lock
	// file someone waits on would let a later locker take a different file.
	// An appender racing a removal recreates the session, as it would in Qwen.
	for _, st := range []SessionState{Active, Archived} {
		lk, _ := s.layout.ledgerLockPath(sessionID, st)
		if err := s.fs.Remove(lk); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, st := range []SessionState{Active, Archived} {
		if err := s.fs.SyncDir(s.layout.ChatsDir(st)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("jsonl: remove session %s: %w", sessionID, err)
	}
	return nil
}

// SeedLedger replaces the session's active ledger with data, durably. It is
// for fixtures (torn tails, malformed lines) and imports, not for records:
// appends go through AppendLedger.
func (s *QwenStore) SeedLedger(ctx context.Context, sessionID string, data []byte) error {
	return s.seed(ctx, sessionID, data, s.layout.LedgerPath)
}

// SeedTranscript replaces the session's active transcript with data,
// durably: tailproof never writes transcripts, so this exists for fixtures
// and for importing recorded sessions.
func (s *QwenStore) SeedTranscript(ctx context.Context, sessionID string, data []byte) error {
	return s.seed(ctx, sessionID, data, s.layout.TranscriptPath)
}

func (s *QwenStore) seed(ctx context.Context, id string, data []byte, pathOf func(string, SessionState) (string, error)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jsonl: seed: %w", err)
	}
	p, err := pathOf(id, Active)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if _, err := s.ensureDir(dir); err != nil {
		return fmt.Errorf("jsonl: seed %s: %w", p, err)
	}
	lock, _ := s.layout.ledgerLockPath(id, Active)
	lk, err := s.fs.Lock(lock)
	if err != nil {
		return fmt.Errorf("jsonl: seed %s: %w", p, err)
	}
	defer lk.Unlock()
	if err := s.replaceAtomically(p, data); err != nil {
		return fmt.Errorf("jsonl: seed %s: %w", p, err)
	}
	if err := s.syncDirChain(dir); err != nil {
		return fmt.Errorf("jsonl: seed %s: %w", p, err)
	}
	return nil
}

// StatLedger describes the session's active ledger file.
func (s *QwenStore) StatLedger(ctx context.Context, sessionID string) (fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: stat ledger: %w", err)
	}
	p, err := s.layout.LedgerPath(sessionID, Active)
	if err != nil {
		return nil, err
	}
	fi, err := s.fs.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("jsonl: stat ledger: %w", err)
	}
	return fi, nil
}

// Workspace is the cwd the layout was built for (see adapters.WorkspaceStore).
func (s *QwenStore) Workspace() string { return s.layout.Cwd }
