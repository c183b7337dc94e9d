package adapters

import (
	"context"
	"errors"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
)

// Sentinels of the session-log contract. Test with errors.Is; ErrNotFound
// (a missing session) and ErrInvalidSessionID are shared with the other stores.
var (
	// ErrSessionExists: Create for an id that is already tracked or already
	// has a log on disk (load or resume it instead).
	ErrSessionExists = errors.New("session already exists")
	// ErrSeqMismatch: an appended batch does not continue the stored log
	// (first seq is not the next seq, or a gap inside the batch).
	ErrSeqMismatch = errors.New("append seq mismatch")
	// ErrUnsupportedVersion: the log's header is not format version 1.
	ErrUnsupportedVersion = errors.New("unsupported session format version")
	// ErrCorruptLog: damage inside the committed region (at or before the last
	// turn/end), or a missing or unreadable header. The session is unloadable
	// and its file is left exactly as it was. It is also events.ErrCorrupt
	// (errors.Is), the framework's one class of damaged input.
	ErrCorruptLog error = corruptLog{}
)

// corruptLog is ErrCorruptLog: its own sentinel, classified as
// events.ErrCorrupt too, with the message it always had.
type corruptLog struct{}

func (corruptLog) Error() string        { return "corrupt session log" }
func (corruptLog) Is(target error) bool { return target == events.ErrCorrupt }

// SessionMeta is a session's header plus its mutable summary
// (dsh's SessionMeta = SessionHeader & SessionSummary). Without a summary
// sidecar, Summary.UpdatedAt is the header's CreatedAt.
type SessionMeta struct {
	Header  dsh.Header
	Summary dsh.Summary
}

// Repair says what Load did to the stored log to make it loadable.
type Repair struct {
	// TruncatedBytes is the size of the torn final fragment cut away.
	TruncatedBytes int64
	// Closers are the records appended durably to close a turn a crash left
	// open (see projections/turns).
	Closers []dsh.Record
	// Evidence locates the copy of the original bytes made before the file
	// was truncated ("" when nothing was cut). Backends without files leave
	// it empty.
	Evidence string
}

// LoadedSession is what Load returns: the balanced log (every turn closed)
// and what repairing it took.
type LoadedSession struct {
	Meta   SessionMeta
	Events []dsh.Record
	Repair Repair
}

// SessionLog is dsh's session persistence contract (its SessionPersistence
// seam, v1): one append-only event log per session plus a small mutable
// summary. Implementations: adapters/jsonl.DSHLog on disk, adapters/memory
// in memory; adapters/adaptertest.RunSessionLogContract proves both.
//
// Create registers a session and writes nothing: the log is materialized by
// the first non-empty Append (lazy materialization), so a session that never
// got an event is absent from Has and List. Create fails with
// ErrSessionExists when the id is tracked or already has a stored log.
//
// Append adds a batch to the end of the log and returns once it is durable.
// Every record must satisfy seq == stored length + index (ErrSeqMismatch
// otherwise) and carry JSON data (an error naming the event type otherwise);
// an empty batch is a no-op. A failed append leaves the stored log exactly as
// it was, so a retry of the same batch neither gaps nor duplicates. Appending
// to an id this instance does not track adopts its stored log first (a Load).
// The batch is copied: mutating it after the call changes nothing.
//
// Load reads the log, and closes rather than truncates: only a torn final
// fragment (a last line without a newline, or garbage after the last turn/end)
// is cut away; if the last turn is open, the closers — an error tool/result
// for each unanswered call, step/end if a step is open, turn/end
// {kind:'interrupted'} — are appended durably and the balanced log is
// returned. Damage at or before the last turn/end fails with ErrCorruptLog
// naming line and offset, and nothing is changed. A header whose version is
// not 1 fails with ErrUnsupportedVersion. A missing id fails with ErrNotFound.
//
// List returns the meta of every stored log; Has reports whether a log is
// stored (or materialized by this instance). Delete removes the log and the
// summary, wherever they are; deleting a missing id is a no-op.
// UpdateSummary merges patch into the summary and stores it atomically
// without touching the log; it works on a created-but-empty session too.
type SessionLog interface {
	Create(ctx context.Context, meta SessionMeta) error
	Append(ctx context.Context, id string, batch []dsh.Record) error
	Load(ctx context.Context, id string) (LoadedSession, error)
	List(ctx context.Context) ([]SessionMeta, error)
	Has(ctx context.Context, id string) (bool, error)
	Delete(ctx context.Context, id string) error
	UpdateSummary(ctx context.Context, id string, patch dsh.SummaryPatch) error
}
