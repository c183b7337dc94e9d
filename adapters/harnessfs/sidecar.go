package harnessfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// SidecarSuffix names a harness session's terminal ledger: it sits beside the
// session file as <file>.tailproof-ledger (ADR 0024). The name does not end
// in .jsonl, so neither Codex's listing (rollout-*.jsonl) nor Claude Code's
// (*.jsonl in a project directory) takes it for a session.
const SidecarSuffix = ".tailproof-ledger"

// SidecarPath is the sidecar ledger of the session file at path.
func SidecarPath(path string) string { return path + SidecarSuffix }

// Sidecar is the terminal ledger of one harness session file: Qwen's v1 line
// format (events/ledger, byte-identical encoder), keyed by the harness's turn
// id, written through jsonl's durable append (seal, fsync, directory fsync,
// 0600, a cross-process lock on <sidecar>.lock). It implements
// adapters.LedgerStore; the session id its methods take is ignored.
type Sidecar struct {
	fsys    vfs.FS
	session string
	store   *jsonl.FilesStore
}

var _ adapters.LedgerStore = (*Sidecar)(nil)

// NewSidecar returns the sidecar ledger of the session file at path. It
// neither creates nor opens anything until the first append.
func NewSidecar(fsys vfs.FS, path string) *Sidecar {
	return &Sidecar{fsys: fsys, session: path, store: jsonl.NewFilesStore(fsys, SidecarPath(path), "")}
}

// Path is the sidecar file.
func (s *Sidecar) Path() string { return SidecarPath(s.session) }

// AppendLedger appends one terminal line durably. The session file itself
// must exist and be a regular file: a sidecar never outlives, or replaces,
// the file it describes.
func (s *Sidecar) AppendLedger(ctx context.Context, id string, line []byte) error {
	if err := s.writable(); err != nil {
		return err
	}
	return s.store.AppendLedger(ctx, id, line)
}

// AppendLedgerLines appends several terminal lines in one durable append:
// all of them or — when the write fails and is rolled back (the error wraps
// jsonl.ErrNotAppended) — none (jsonl.FilesStore.AppendLedgerLines).
func (s *Sidecar) AppendLedgerLines(ctx context.Context, lines [][]byte) error {
	if err := s.writable(); err != nil {
		return err
	}
	return s.store.AppendLedgerLines(ctx, lines)
}

// AppendLedgerSeq is AppendLedgerLines over lines produced on demand
// (jsonl.FilesStore.AppendLedgerSeq): a run of any length is appended
// without being held as bytes.
func (s *Sidecar) AppendLedgerSeq(ctx context.Context, lines iter.Seq[[]byte]) error {
	if err := s.writable(); err != nil {
		return err
	}
	return s.store.AppendLedgerSeq(ctx, lines)
}

// writable checks, before an append, that the session file is a regular
// file and the sidecar and its lock are regular files or missing.
func (s *Sidecar) writable() error {
	if err := regularFile(s.fsys, s.session); err != nil {
		return err
	}
	if err := regularOrMissing(s.fsys, s.Path()); err != nil {
		return err
	}
	return regularOrMissing(s.fsys, s.Path()+".lock")
}

// OpenLedger streams the sidecar; a missing sidecar reads as empty.
func (s *Sidecar) OpenLedger(ctx context.Context, id string) (io.ReadCloser, error) {
	if err := regularOrMissing(s.fsys, s.Path()); err != nil {
		return nil, err
	}
	return s.store.OpenLedger(ctx, id)
}

// OpenLedgerTail streams at most the sidecar's last n bytes.
func (s *Sidecar) OpenLedgerTail(ctx context.Context, id string, n int64) (io.ReadCloser, bool, error) {
	if err := regularOrMissing(s.fsys, s.Path()); err != nil {
		return nil, false, err
	}
	return s.store.OpenLedgerTail(ctx, id, n)
}

// ErrNotRegular: a session file or its sidecar is a FIFO, a device, a
// directory or anything else that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// regularFile refuses anything but a regular file — on the real
// filesystem a symbolic link too, whatever it points at: a link planted
// beside a session file (a sidecar or lock linked to someone else's file)
// must not be written through. (vfs.Rooted, from the "cli" work, confines
// every path to its roots; until the CLI opens through it, this check
// stands in for the session and sidecar paths.)
func regularFile(fsys vfs.FS, path string) error {
	if fsys == vfs.OS {
		if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("harnessfs: %s: %w (a symbolic link)", path, ErrNotRegular)
		}
	}
	st, err := fsys.Stat(path)
	if err != nil {
		return fmt.Errorf("harnessfs: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("harnessfs: %s: %w (mode %s)", path, ErrNotRegular, st.Mode().Type())
	}
	return nil
}

func regularOrMissing(fsys vfs.FS, path string) error {
	err := regularFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
