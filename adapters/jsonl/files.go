package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// FilesStore serves one session from two explicit paths — what
// `tailproof reconcile --ledger FILE --transcript FILE` works on. The session
// id passed to its methods is ignored. Appends go through the same durable,
// group-committed, cross-process-locked writer as QwenStore, and take the
// same lock file (<id>.ledger.lock beside a <id>.ledger.jsonl), so a CLI run
// and a daemon using QwenStore on the same ledger never fuse lines.
type FilesStore struct {
	q          *QwenStore
	ledger     string
	lock       string
	transcript string
}

var _ adapters.Store = (*FilesStore)(nil)

// NewFilesStore returns a store over ledgerPath and transcriptPath.
func NewFilesStore(fsys vfs.FS, ledgerPath, transcriptPath string) *FilesStore {
	lock := ledgerPath + ".lock"
	if base, ok := strings.CutSuffix(ledgerPath, ".ledger.jsonl"); ok {
		lock = base + lockExt
	}
	return &FilesStore{q: NewQwenStore(fsys, QwenLayout{}), ledger: ledgerPath, lock: lock, transcript: transcriptPath}
}

// AppendLedger appends one record line durably (see adapters.LedgerStore).
func (s *FilesStore) AppendLedger(ctx context.Context, _ string, line []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jsonl: append ledger: %w", err)
	}
	if len(line) == 0 || bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("%w (%s, %d bytes)", ErrInvalidLine, s.ledger, len(line))
	}
	return s.q.appendLine(s.q.writer(s.ledger, s.lock), bytes.Clone(line))
}

// OpenLedger streams the ledger; a missing ledger is an empty reader.
func (s *FilesStore) OpenLedger(ctx context.Context, _ string) (io.ReadCloser, error) {
	f, err := s.q.fs.OpenFile(s.ledger, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("jsonl: open ledger: %w", err)
	}
	return f, nil
}

// OpenLedgerTail streams at most the ledger's last n bytes.
func (s *FilesStore) OpenLedgerTail(ctx context.Context, _ string, n int64) (io.ReadCloser, bool, error) {
	if n <= 0 {
		return nil, false, fmt.Errorf("jsonl: open ledger tail: window must be positive, got %d", n)
	}
	f, err := s.q.fs.OpenFile(s.ledger, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return io.NopCloser(bytes.NewReader(nil)), false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("jsonl: open ledger tail: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("jsonl: open ledger tail: %w", err)
	}
	if size := st.Size(); size > n {
		return sectionCloser{io.NewSectionReader(f, size-n, n), f}, true, nil
	}
	return sectionCloser{io.NewSectionReader(f, 0, st.Size()), f}, false, nil
}

// OpenTranscript streams the transcript; missing is an error wrapping
// adapters.ErrNotFound.
func (s *FilesStore) OpenTranscript(ctx context.Context, _ string) (io.ReadCloser, error) {
	f, err := s.q.fs.OpenFile(s.transcript, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("jsonl: transcript %s: %w (%w)", s.transcript, adapters.ErrNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("jsonl: open transcript: %w", err)
	}
	return f, nil
}

// TranscriptTailUUID captures the dispatch marker exactly as Qwen does.
func (s *FilesStore) TranscriptTailUUID(ctx context.Context, _ string) (string, bool) {
	f, err := s.q.fs.OpenFile(s.transcript, os.O_RDONLY, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false
	}
	return TailUUID(f, st.Size())
}
