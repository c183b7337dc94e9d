package adapters

import (
	"context"
	"errors"
	"io"
)

// ErrNotFound classifies a missing session file. A missing ledger is not an
// error for readers (it reads as empty); a missing transcript is evidence (the
// reconciler decides unknown), and callers test for it with errors.Is.
var ErrNotFound = errors.New("not found")

// ErrInvalidSessionID classifies a session id that cannot be mapped to a
// path safely (empty, or one the layout refuses rather than escapes).
var ErrInvalidSessionID = errors.New("invalid session id")

// LedgerStore holds one append-only prompt terminal ledger per session.
//
// AppendLedger is the write-ahead append: it seals a torn tail (a newline when
// the last byte is not one), writes line plus a newline, and returns only once
// the bytes — and, when the file was created, its directory entry — are
// durable. line holds one encoded record without its newline. Appends for one
// session never interleave or fuse, even across processes.
//
// OpenLedger streams the whole ledger; a missing ledger yields an empty
// reader, not an error. OpenLedgerTail streams at most the last n bytes;
// windowed reports whether the file was longer than n, in which case the
// reader's first line is partial by construction and the caller drops it (the
// reference drops it always, even on a line boundary).
type LedgerStore interface {
	AppendLedger(ctx context.Context, sessionID string, line []byte) error
	OpenLedger(ctx context.Context, sessionID string) (io.ReadCloser, error)
	OpenLedgerTail(ctx context.Context, sessionID string, n int64) (r io.ReadCloser, windowed bool, err error)
}

// TranscriptStore reads session transcripts (Qwen chat records).
//
// OpenTranscript streams the transcript from its first byte and may be called
// more than once per decision (the reconciler reads in two streaming passes);
// a missing transcript returns an error wrapping ErrNotFound.
// TranscriptTailUUID captures the dispatch marker: the uuid of the last
// non-empty line within the last 64 KiB, or ok=false when that line is torn,
// larger than the window, lacks a uuid, or the file is missing/unreadable.
type TranscriptStore interface {
	OpenTranscript(ctx context.Context, sessionID string) (io.ReadCloser, error)
	TranscriptTailUUID(ctx context.Context, sessionID string) (uuid string, ok bool)
}

// ArchiveStore is implemented by stores that can tell whether a session
// also has a transcript in an archived state (Qwen Code's chats/archive/).
// Reconcile asks it before it reads an empty active transcript as
// evidence: Qwen's archive moves the transcript before the ledger, so an
// archived copy may hold the session's real history.
type ArchiveStore interface {
	HasArchivedTranscript(ctx context.Context, sessionID string) (bool, error)
}

// Store is what Reconcile needs.
type Store interface {
	LedgerStore
	TranscriptStore
}

// WorkspaceStore is implemented by stores that know which workspace their
// sessions belong to (Qwen Code's layout keys its chats directory by a
// sanitized cwd, which two different workspaces can share). When it returns a
// non-empty cwd the reconciler requires the transcript's first record to
// belong to that workspace, as Qwen Code's loadSession does.
type WorkspaceStore interface {
	Workspace() string
}
