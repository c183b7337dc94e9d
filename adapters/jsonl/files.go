package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
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

// AppendLedgerLines appends several record lines as one durable append:
// under the lock, one fsync, so either every line is in the ledger or — when
// a write or the fsync fails and the cut back succeeds (the error then
// wraps ErrNotAppended) — none is. A run that stamps several turns uses it
// so that a failure never leaves half its stamps behind. No lines is a
// no-op.
func (s *FilesStore) AppendLedgerLines(ctx context.Context, lines [][]byte) error {
	return s.AppendLedgerSeq(ctx, slices.Values(lines))
}

// AppendLedgerSeq is AppendLedgerLines over lines produced on demand, so
// that a large run is never held in memory as bytes: lines is ranged over
// twice — once to check every line (nothing is opened when one is empty or
// holds a newline), once to write them — and must yield the same lines
// both times. The round is written in chunks of whole lines under one lock
// hold and made durable by one fsync; a failed write or fsync cuts the
// whole round back (ErrNotAppended), as for one line. A crash before the
// fsync may leave any prefix of the round, its last line possibly torn:
// exactly what a crash does to a single write, which the next append seals
// off (ADR 0004).
func (s *FilesStore) AppendLedgerSeq(ctx context.Context, lines iter.Seq[[]byte]) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jsonl: append ledger: %w", err)
	}
	n := 0
	for line := range lines {
		n++
		if len(line) == 0 || bytes.IndexByte(line, '\n') >= 0 {
			return fmt.Errorf("%w (%s, line %d, %d bytes)", ErrInvalidLine, s.ledger, n, len(line))
		}
	}
	if n == 0 {
		return nil
	}
	// The group-commit writer writes each queued entry's lines, each with
	// its newline, in the round that holds the entry: one all-or-nothing
	// round.
	return s.q.appendLines(s.q.writer(s.ledger, s.lock), lines)
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
