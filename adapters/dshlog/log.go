package dshlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/dsh"
)

// NoCwdBucket is the bucket of sessions whose header has no cwd.
const NoCwdBucket = "_no-cwd"

// MaxHeaderBytes bounds the first line List reads from each log. dsh reads
// headers of any length; a header is a handful of short fields, so a first
// line past this is not a header we want to hold in memory, and the file is
// skipped like any other non-header file.
const MaxHeaderBytes = 1 << 20

// Log is dsh's v1 JSONL session persistence backend
// (SessionPersistenceJsonl at dsh commit 9a30c46d63) over a vfs.FS. It
// implements adapters.SessionLog; see that interface for the contract and
// deepseek-dsh.md §2 for the reference semantics. The layout under root:
//
//	cwd-<sha256(cwd) hex[:12]>/   (or _no-cwd/)
//	  <EncodeSegment(id)>.jsonl          header line + one event per line
//	  <EncodeSegment(id)>.summary.json   {updatedAt, title?, firstPrompt?}
//	  <…>.jsonl.broken-<size>               evidence: the original bytes of a
//	                                        log whose torn tail load cut away
//
// Where it differs from dsh, on purpose:
//   - Before load truncates a torn fragment it copies the original file to
//     <name>.jsonl.broken-<size> (temp, fsync, link, directory fsync), as etcd
//     keeps a .broken WAL: the bytes a repair discards are kept as evidence.
//   - Creating a bucket fsyncs its parent directory, and the summary's rename
//     is followed by a directory fsync (dsh skips both).
//   - A line over MaxLineBytes is a hole (an error naming the line when it is
//     in the committed region), never an allocation of its size.
//
// All operations of one Log are serialized. Like dsh, it does not lock
// against another process writing the same log.
type Log struct {
	fs   vfs.FS
	root string
	opts Options

	mu       sync.Mutex
	sessions map[string]*session
}

// Options tune a Log.
type Options struct {
	// MaxLineBytes bounds one log line (<= 0: events.DefaultMaxLineBytes).
	MaxLineBytes int
	// Now is the clock for the summary's updatedAt after an append
	// (nil: time.Now).
	Now func() time.Time
}

type session struct {
	meta         adapters.SessionMeta
	cursor       int64 // number of events stored
	materialized bool
	// paths caches LogPath and the summary's path: a session's id and
	// cwd never change, and every append needs both.
	logPath, summaryPath string
}

// paths returns where st's log and summary live.
func (l *Log) paths(st *session, id string) (logPath, summaryPath string, err error) {
	if st.logPath == "" {
		p, err := l.LogPath(st.meta.Header.Cwd, id)
		if err != nil {
			return "", "", err
		}
		st.logPath, st.summaryPath = p, summaryPathOf(p)
	}
	return st.logPath, st.summaryPath, nil
}

var _ adapters.SessionLog = (*Log)(nil)

// New returns a backend rooted at root (made absolute once, as dsh
// path.resolve()s it in its constructor).
func New(fsys vfs.FS, root string, opts Options) *Log {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Log{fs: fsys, root: filepath.Clean(root), opts: opts, sessions: map[string]*session{}}
}

// Root is the directory holding the buckets.
func (l *Log) Root() string { return l.root }

// Create implements adapters.SessionLog: it records the session and writes
// nothing.
func (l *Log) Create(ctx context.Context, meta adapters.SessionMeta) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id := meta.Header.ID
	if _, err := EncodeSegment(id); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sessions[id]; ok {
		return fmt.Errorf("dshlog: session %q already exists in this backend: %w", id, adapters.ErrSessionExists)
	}
	_, found, err := l.findLog(id, nil)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("dshlog: session %q already has a persisted log on disk; load/resume it instead of creating: %w", id, adapters.ErrSessionExists)
	}
	l.sessions[id] = &session{meta: cloneMeta(meta)}
	return nil
}

// Append implements adapters.SessionLog.
func (l *Log) Append(ctx context.Context, id string, batch []dsh.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Check and serialize before anything else, so a bad batch is named by
	// its event and a caller mutating its slice afterwards changes nothing.
	// The seqs must run on from the stored events; all that needs to be kept
	// of them to check that under the lock is the first seq and the first
	// place (gap) where they stop counting up by one.
	if len(batch) == 0 {
		return nil
	}
	lines := make([]byte, 0, linesSize(batch))
	first, gap, gapSeq := batch[0].Seq, -1, int64(0)
	for i, r := range batch {
		var err error
		if lines, err = dsh.AppendCanonical(lines, r); err != nil {
			return fmt.Errorf("dshlog: session %q: %w", id, err)
		}
		lines = append(lines, '\n')
		if gap < 0 && r.Seq != first+int64(i) {
			gap, gapSeq = i, r.Seq
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.adopt(id)
	if err != nil {
		return err
	}
	// The first index whose seq is not cursor+index: 0 unless the batch
	// starts at the cursor, and then the gap.
	if first != st.cursor {
		return fmt.Errorf("dshlog: append seq mismatch for %q: expected %d at index %d, got %d: %w", id, st.cursor, 0, first, adapters.ErrSeqMismatch)
	}
	if gap >= 0 {
		return fmt.Errorf("dshlog: append seq mismatch for %q: expected %d at index %d, got %d: %w", id, st.cursor+int64(gap), gap, gapSeq, adapters.ErrSeqMismatch)
	}
	path, summaryPath, err := l.paths(st, id)
	if err != nil {
		return err
	}
	if !st.materialized {
		if err := l.materialize(path, st.meta.Header, lines); err != nil {
			return err
		}
		st.materialized = true
	} else if err := appendLines(l.fs, path, lines); err != nil {
		if errors.Is(err, errRollback) {
			// The file may now end in a fragment of this batch. Forget the
			// session so the next call adopts it from disk, which cuts the
			// fragment, instead of appending after it.
			delete(l.sessions, id)
		}
		return err
	}
	st.cursor += int64(len(batch))
	// The log write is the transaction; the summary is recoverable metadata,
	// so its failure does not fail the append (as in dsh).
	next := st.meta.Summary
	next.UpdatedAt = float64(l.opts.Now().UnixMilli())
	if err := l.writeSummary(path, summaryPath, next); err == nil {
		st.meta.Summary = next
	}
	return nil
}

// Load implements adapters.SessionLog: see RecoverV1 for the repair.
func (l *Log) Load(ctx context.Context, id string) (adapters.LoadedSession, error) {
	if err := ctx.Err(); err != nil {
		return adapters.LoadedSession{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ls, err := l.loadCore(id)
	if err != nil {
		return adapters.LoadedSession{}, err
	}
	ls.Meta = cloneMeta(ls.Meta)
	return ls, nil
}

func (l *Log) loadCore(id string) (adapters.LoadedSession, error) {
	if _, err := EncodeSegment(id); err != nil {
		return adapters.LoadedSession{}, err
	}
	path, found, err := l.findLog(id, l.sessions[id])
	if err != nil {
		return adapters.LoadedSession{}, err
	}
	if !found {
		return adapters.LoadedSession{}, fmt.Errorf("dshlog: session %q not found: %w", id, adapters.ErrNotFound)
	}
	rec, err := recoverV1(l.fs, path, l.opts.MaxLineBytes, true)
	if err != nil {
		return adapters.LoadedSession{}, err
	}
	meta := adapters.SessionMeta{Header: rec.Header, Summary: dsh.Summary{UpdatedAt: rec.Header.CreatedAt}}
	if p, ok := l.readSummary(path); ok {
		meta.Summary = meta.Summary.Apply(p)
	}
	l.sessions[id] = &session{meta: cloneMeta(meta), cursor: int64(len(rec.Events)), materialized: true}
	return adapters.LoadedSession{Meta: meta, Events: rec.Events, Repair: rec.Repair}, nil
}

// adopt returns the tracked state of id, loading (and so repairing) its
// stored log when this instance does not track it yet.
func (l *Log) adopt(id string) (*session, error) {
	if st, ok := l.sessions[id]; ok {
		return st, nil
	}
	if _, err := l.loadCore(id); err != nil {
		return nil, err
	}
	return l.sessions[id], nil
}

// Has implements adapters.SessionLog.
func (l *Log) Has(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if _, err := EncodeSegment(id); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.sessions[id]
	if st != nil && st.materialized {
		return true, nil
	}
	_, found, err := l.findLog(id, st)
	return found, err
}

// Delete implements adapters.SessionLog: the log wherever it is, and the
// summary from every bucket (a lazy session's summary outlives a restart
// that forgot its cwd).
func (l *Log) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	enc, err := EncodeSegment(id)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	path, found, err := l.findLog(id, l.sessions[id])
	if err != nil {
		return err
	}
	if found {
		if err := l.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("dshlog: delete %q: %w", id, err)
		}
		if err := l.fs.SyncDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("dshlog: delete %q: %w", id, err)
		}
	}
	buckets, err := l.buckets()
	if err != nil {
		return err
	}
	for _, b := range buckets {
		sp := filepath.Join(l.root, b, enc+".summary.json")
		if err := l.fs.Remove(sp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("dshlog: delete %q: %w", id, err)
		}
	}
	delete(l.sessions, id)
	return nil
}

// UpdateSummary implements adapters.SessionLog. The summary is stored first
// and only then committed in memory, so a failed update can never become
// durable through a later append's summary write.
func (l *Log) UpdateSummary(ctx context.Context, id string, patch dsh.SummaryPatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.adopt(id)
	if err != nil {
		return err
	}
	next := st.meta.Summary.Apply(patch)
	path, summaryPath, err := l.paths(st, id)
	if err != nil {
		return err
	}
	if err := l.writeSummary(path, summaryPath, next); err != nil {
		return fmt.Errorf("dshlog: update %q: %w", id, err)
	}
	st.meta.Summary = next
	return nil
}

func cloneMeta(m adapters.SessionMeta) adapters.SessionMeta {
	cp := func(s *string) *string {
		if s == nil {
			return nil
		}
		v := *s
		return &v
	}
	m.Header.Cwd = cp(m.Header.Cwd)
	m.Header.ParentSession = cp(m.Header.ParentSession)
	m.Summary.Title = cp(m.Summary.Title)
	m.Summary.FirstPrompt = cp(m.Summary.FirstPrompt)
	return m
}
