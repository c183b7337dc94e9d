package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"io"
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

// AppendLedgerLines appends several record lines as one durable write: one
// write and one fsync under the lock, so either every line is in the ledger
// or — when the write or its fsync fails and the cut back succeeds (the error
// then wraps ErrNotAppended) — none is. A run that stamps several turns uses
// it so that a failure never leaves half its stamps behind. No lines is a
// no-op.
func (s *FilesStore) AppendLedgerLines(ctx context.Context, lines [][]byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jsonl: append ledger: %w", err)
	}
	if len(lines) == 0 {
		return nil
	}
	var joined []byte
	for i, line := range lines {
		if len(line) == 0 || bytes.IndexByte(line, '\n') >= 0 {
			return fmt.Errorf("%w (%s, line %d of %d, %d bytes)", ErrInvalidLine, s.ledger, i+1, len(lines), len(line))
		}
		if i > 0 {
			joined = append(joined, '\n')
		}
		joined = append(joined, line...)
	}
	// The group-commit writer ends every queued entry with a newline and
	// writes a round in one write; one entry holding the joined lines is
	// one all-or-nothing round.
	return s.q.appendLine(s.q.writer(s.ledger, s.lock), joined)
}

// OpenLedger streams the ledger; a missing ledger is an empty reader.
func (s *FilesStore) OpenLedger(ctx context.Context, _ string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: open ledger: %w", err)
	}
	return openLedgerFile(s.q.fs, s.ledger)
}

// OpenLedgerTail streams at most the ledger's last n bytes.
func (s *FilesStore) OpenLedgerTail(ctx context.Context, _ string, n int64) (io.ReadCloser, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("jsonl: open ledger tail: %w", err)
	}
	return openLedgerTailFile(s.q.fs, s.ledger, n)
}

// OpenTranscript streams the transcript; missing is an error wrapping
// adapters.ErrNotFound.
func (s *FilesStore) OpenTranscript(ctx context.Context, _ string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: open transcript: %w", err)
	}
	return openTranscriptFile(s.q.fs, s.transcript)
}

// TranscriptTailUUID captures the dispatch marker exactly as Qwen does.
func (s *FilesStore) TranscriptTailUUID(ctx context.Context, _ string) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	return tailUUIDFile(s.q.fs, s.transcript)
}
