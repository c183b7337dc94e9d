package jsonl

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

// DSHNoCwdBucket is the bucket of sessions whose header has no cwd.
const DSHNoCwdBucket = "_no-cwd"

// DSHMaxHeaderBytes bounds the first line List reads from each log. dsh reads
// headers of any length; a header is a handful of short fields, so a first
// line past this is not a header we want to hold in memory, and the file is
// skipped like any other non-header file.
const DSHMaxHeaderBytes = 1 << 20

// DSHLog is dsh's v1 JSONL session persistence backend
// (SessionPersistenceJsonl at dsh commit 9a30c46d63) over a vfs.FS. It
// implements adapters.SessionLog; see that interface for the contract and
// deepseek-dsh.md §2 for the reference semantics. The layout under root:
//
//	cwd-<sha256(cwd) hex[:12]>/   (or _no-cwd/)
//	  <DSHEncodeSegment(id)>.jsonl          header line + one event per line
//	  <DSHEncodeSegment(id)>.summary.json   {updatedAt, title?, firstPrompt?}
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
// All operations of one DSHLog are serialized. Like dsh, it does not lock
// against another process writing the same log.
type DSHLog struct {
	fs   vfs.FS
	root string
	opts DSHOptions

	mu       sync.Mutex
	sessions map[string]*dshSession
}

// DSHOptions tune a DSHLog.
type DSHOptions struct {
	// MaxLineBytes bounds one log line (<= 0: events.DefaultMaxLineBytes).
	MaxLineBytes int
	// Now is the clock for the summary's updatedAt after an append
	// (nil: time.Now).
	Now func() time.Time
}

type dshSession struct {
	meta         adapters.SessionMeta
	cursor       int64 // number of events stored
	materialized bool
	// paths caches LogPath and the summary's path: a session's id and
	// cwd never change, and every append needs both.
	logPath, summaryPath string
}

// paths returns where st's log and summary live.
func (l *DSHLog) paths(st *dshSession, id string) (logPath, summaryPath string, err error) {
	if st.logPath == "" {
		p, err := l.LogPath(st.meta.Header.Cwd, id)
		if err != nil {
			return "", "", err
		}
		st.logPath, st.summaryPath = p, dshSummaryPath(p)
	}
	return st.logPath, st.summaryPath, nil
}

var _ adapters.SessionLog = (*DSHLog)(nil)

// NewDSHLog returns a backend rooted at root (made absolute once, as dsh
// path.resolve()s it in its constructor).
func NewDSHLog(fsys vfs.FS, root string, opts DSHOptions) *DSHLog {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &DSHLog{fs: fsys, root: filepath.Clean(root), opts: opts, sessions: map[string]*dshSession{}}
}

// Root is the directory holding the buckets.
func (l *DSHLog) Root() string { return l.root }

// DSHEncodeSegment maps a session id to one safe path segment exactly as
// dsh's encodeSegment does: each UTF-16 code unit in [A-Za-z0-9._-] is kept,
// every other one (including '~') becomes '~' and four uppercase hex digits;
// "." and ".." become "~002E" and "~002E~002E". The mapping is injective, so
// two ids never share a file and no id escapes its bucket. A lone surrogate
// is accepted in its WTF-8 form (ED A0–BF xx); any other invalid UTF-8 is
// refused with adapters.ErrInvalidSessionID, as is the empty id.
func DSHEncodeSegment(raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("jsonl: cannot encode an empty path segment: %w", adapters.ErrInvalidSessionID)
	}
	if raw == "." {
		return "~002E", nil
	}
	if raw == ".." {
		return "~002E~002E", nil
	}
	if dshSafeSegment(raw) {
		return raw, nil // what the loop below would build, byte for byte
	}
	var b strings.Builder
	b.Grow(len(raw))
	unit := func(u uint16) {
		const hexd = "0123456789ABCDEF"
		b.WriteByte('~')
		b.WriteByte(hexd[u>>12])
		b.WriteByte(hexd[u>>8&0xF])
		b.WriteByte(hexd[u>>4&0xF])
		b.WriteByte(hexd[u&0xF])
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
				b.WriteByte(c)
			} else {
				unit(uint16(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(raw[i:])
		if r == utf8.RuneError && size == 1 {
			// WTF-8 surrogate: ED A0..BF 80..BF.
			if c == 0xED && i+2 < len(raw) && raw[i+1] >= 0xA0 && raw[i+1] <= 0xBF && raw[i+2] >= 0x80 && raw[i+2] <= 0xBF {
				unit(0xD000 | uint16(raw[i+1]&0x3F)<<6 | uint16(raw[i+2]&0x3F))
				i += 3
				continue
			}
			return "", fmt.Errorf("jsonl: session id %q is not valid UTF-8: %w", raw, adapters.ErrInvalidSessionID)
		}
		if r >= 0x10000 {
			r -= 0x10000
			unit(uint16(0xD800 + r>>10))
			unit(uint16(0xDC00 + r&0x3FF))
		} else {
			unit(uint16(r))
		}
		i += size
	}
	return b.String(), nil
}

// dshSafeSegment reports whether DSHEncodeSegment keeps every byte of raw.
func dshSafeSegment(raw string) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// DSHBucket names the directory of a session: "cwd-" and the first 12 hex
// digits of sha256(cwd), or DSHNoCwdBucket without a cwd. (dsh's comment
// promises a readable suffix; its code appends none, and neither do we.)
func DSHBucket(cwd *string) string {
	if cwd == nil {
		return DSHNoCwdBucket
	}
	sum := sha256.Sum256([]byte(*cwd))
	return "cwd-" + hex.EncodeToString(sum[:])[:12]
}

// LogPath is where the log of id with cwd lives.
func (l *DSHLog) LogPath(cwd *string, id string) (string, error) {
	enc, err := DSHEncodeSegment(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(l.root, DSHBucket(cwd), enc+".jsonl"), nil
}

func dshSummaryPath(logPath string) string {
	return strings.TrimSuffix(logPath, ".jsonl") + ".summary.json"
}

// Create implements adapters.SessionLog: it records the session and writes
// nothing.
func (l *DSHLog) Create(ctx context.Context, meta adapters.SessionMeta) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id := meta.Header.ID
	if _, err := DSHEncodeSegment(id); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sessions[id]; ok {
		return fmt.Errorf("jsonl: session %q already exists in this backend: %w", id, adapters.ErrSessionExists)
	}
	_, found, err := l.findLog(id, nil)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("jsonl: session %q already has a persisted log on disk; load/resume it instead of creating: %w", id, adapters.ErrSessionExists)
	}
	l.sessions[id] = &dshSession{meta: cloneMeta(meta)}
	return nil
}

// Append implements adapters.SessionLog.
func (l *DSHLog) Append(ctx context.Context, id string, batch []dsh.Record) error {
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
	lines := make([]byte, 0, dshLinesSize(batch))
	first, gap, gapSeq := batch[0].Seq, -1, int64(0)
	for i, r := range batch {
		var err error
		if lines, err = dsh.AppendCanonical(lines, r); err != nil {
			return fmt.Errorf("jsonl: session %q: %w", id, err)
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
		return fmt.Errorf("jsonl: append seq mismatch for %q: expected %d at index %d, got %d: %w", id, st.cursor, 0, first, adapters.ErrSeqMismatch)
	}
	if gap >= 0 {
		return fmt.Errorf("jsonl: append seq mismatch for %q: expected %d at index %d, got %d: %w", id, st.cursor+int64(gap), gap, gapSeq, adapters.ErrSeqMismatch)
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
	} else if err := dshAppendLines(l.fs, path, lines); err != nil {
		if errors.Is(err, errDSHRollback) {
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

// Load implements adapters.SessionLog: see RecoverDSHLog for the repair.
func (l *DSHLog) Load(ctx context.Context, id string) (adapters.LoadedSession, error) {
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

func (l *DSHLog) loadCore(id string) (adapters.LoadedSession, error) {
	if _, err := DSHEncodeSegment(id); err != nil {
		return adapters.LoadedSession{}, err
	}
	path, found, err := l.findLog(id, l.sessions[id])
	if err != nil {
		return adapters.LoadedSession{}, err
	}
	if !found {
		return adapters.LoadedSession{}, fmt.Errorf("jsonl: session %q not found: %w", id, adapters.ErrNotFound)
	}
	rec, err := recoverDSHLog(l.fs, path, l.opts.MaxLineBytes)
	if err != nil {
		return adapters.LoadedSession{}, err
	}
	meta := adapters.SessionMeta{Header: rec.Header, Summary: dsh.Summary{UpdatedAt: rec.Header.CreatedAt}}
	if p, ok := l.readSummary(path); ok {
		meta.Summary = meta.Summary.Apply(p)
	}
	l.sessions[id] = &dshSession{meta: cloneMeta(meta), cursor: int64(len(rec.Events)), materialized: true}
	return adapters.LoadedSession{Meta: meta, Events: rec.Events, Repair: rec.Repair}, nil
}

// adopt returns the tracked state of id, loading (and so repairing) its
// stored log when this instance does not track it yet.
func (l *DSHLog) adopt(id string) (*dshSession, error) {
	if st, ok := l.sessions[id]; ok {
		return st, nil
	}
	if _, err := l.loadCore(id); err != nil {
		return nil, err
	}
	return l.sessions[id], nil
}

// Has implements adapters.SessionLog.
func (l *DSHLog) Has(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if _, err := DSHEncodeSegment(id); err != nil {
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
func (l *DSHLog) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	enc, err := DSHEncodeSegment(id)
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
			return fmt.Errorf("jsonl: delete %q: %w", id, err)
		}
		if err := l.fs.SyncDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("jsonl: delete %q: %w", id, err)
		}
	}
	buckets, err := l.buckets()
	if err != nil {
		return err
	}
	for _, b := range buckets {
		sp := filepath.Join(l.root, b, enc+".summary.json")
		if err := l.fs.Remove(sp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("jsonl: delete %q: %w", id, err)
		}
	}
	delete(l.sessions, id)
	return nil
}

// UpdateSummary implements adapters.SessionLog. The summary is stored first
// and only then committed in memory, so a failed update can never become
// durable through a later append's summary write.
func (l *DSHLog) UpdateSummary(ctx context.Context, id string, patch dsh.SummaryPatch) error {
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
		return fmt.Errorf("jsonl: update %q: %w", id, err)
	}
	st.meta.Summary = next
	return nil
}

// List implements adapters.SessionLog: every `*.jsonl` of every bucket whose
// first line is a session header, with its summary laid over. Files that are
// empty, have no complete first line, or whose first line is not a header are
// skipped. A missing root lists nothing; any other error is returned.
func (l *DSHLog) List(ctx context.Context) ([]adapters.SessionMeta, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	buckets, err := l.buckets()
	if err != nil {
		return nil, err
	}
	var out []adapters.SessionMeta
	for _, b := range buckets {
		dir := filepath.Join(l.root, b)
		ents, err := l.fs.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("jsonl: list %s: %w", dir, err)
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			h, ok := l.readHeader(path)
			if !ok {
				continue
			}
			meta := adapters.SessionMeta{Header: h, Summary: dsh.Summary{UpdatedAt: h.CreatedAt}}
			if p, ok := l.readSummary(path); ok {
				meta.Summary = meta.Summary.Apply(p)
			}
			out = append(out, meta)
		}
	}
	return out, nil
}

// buckets lists root's subdirectories; a missing root has none.
func (l *DSHLog) buckets() ([]string, error) {
	ents, err := l.fs.ReadDir(l.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("jsonl: list %s: %w", l.root, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// findLog locates id's log: in its own bucket when the tracked state knows
// its cwd, otherwise by looking in every bucket. Only "does not exist" means
// absent; any other error (ENOTDIR, EIO) is returned.
func (l *DSHLog) findLog(id string, st *dshSession) (string, bool, error) {
	enc, err := DSHEncodeSegment(id)
	if err != nil {
		return "", false, err
	}
	if st != nil && st.meta.Header.Cwd != nil {
		path := filepath.Join(l.root, DSHBucket(st.meta.Header.Cwd), enc+".jsonl")
		ok, err := l.exists(path)
		return path, ok, err
	}
	buckets, err := l.buckets()
	if err != nil {
		return "", false, err
	}
	for _, b := range buckets {
		path := filepath.Join(l.root, b, enc+".jsonl")
		ok, err := l.exists(path)
		if err != nil {
			return "", false, err
		}
		if ok {
			return path, true, nil
		}
	}
	return "", false, nil
}

func (l *DSHLog) exists(path string) (bool, error) {
	_, err := l.fs.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("jsonl: %w", err)
}

// readHeader reads only the first line, in 8 KiB chunks, up to DSHMaxHeaderBytes.
func (l *DSHLog) readHeader(path string) (dsh.Header, bool) {
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return dsh.Header{}, false
	}
	defer f.Close()
	var acc []byte
	buf := make([]byte, 8<<10)
	for len(acc) <= DSHMaxHeaderBytes {
		n, err := f.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			h, perr := dsh.ParseHeader(append(acc, buf[:i]...))
			return h, perr == nil
		}
		acc = append(acc, buf[:n]...)
		if err != nil {
			return dsh.Header{}, false // EOF before a complete first line
		}
	}
	return dsh.Header{}, false
}

func (l *DSHLog) readSummary(logPath string) (dsh.SummaryPatch, bool) {
	f, err := l.fs.OpenFile(dshSummaryPath(logPath), os.O_RDONLY, 0)
	if err != nil {
		return dsh.SummaryPatch{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, DSHMaxHeaderBytes))
	if err != nil {
		return dsh.SummaryPatch{}, false
	}
	p, err := dsh.ParseSummary(b)
	return p, err == nil
}

// writeSummary replaces the summary atomically: temp file (created
// exclusively, 0600), fsync, rename over, directory fsync.
func (l *DSHLog) writeSummary(logPath, final string, s dsh.Summary) error {
	dir := filepath.Dir(logPath)
	if err := dshMkdirDurable(l.fs, l.root, dir); err != nil {
		return err
	}
	tmp, err := dshWriteTemp(l.fs, final, dsh.AppendSummary(make([]byte, 0, dshSummarySize(s)), s))
	if err != nil {
		return err
	}
	if err := l.fs.Rename(tmp, final); err != nil {
		_ = l.fs.Remove(tmp)
		return fmt.Errorf("jsonl: publish summary: %w", err)
	}
	if err := l.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("jsonl: sync %s: %w", dir, err)
	}
	return nil
}

// dshSummarySize is about the length of s as JSON, so writing it allocates
// once: the strings, and at most 64 bytes of keys, number and punctuation.
func dshSummarySize(s dsh.Summary) int {
	n := 64
	if s.Title != nil {
		n += len(*s.Title)
	}
	if s.FirstPrompt != nil {
		n += len(*s.FirstPrompt)
	}
	return n
}

// materialize writes the header and the first batch as a new log: temp file
// (exclusive, 0600), fsync, link to the final name — which fails rather than
// clobbers if a log appeared meanwhile — then a directory fsync.
func (l *DSHLog) materialize(path string, h dsh.Header, lines []byte) error {
	dir := filepath.Dir(path)
	if err := dshMkdirDurable(l.fs, l.root, dir); err != nil {
		return err
	}
	if ok, err := l.exists(path); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("jsonl: refusing to materialize %q: a log already exists on disk (load/resume it instead): %w", h.ID, adapters.ErrSessionExists)
	}
	content := dsh.AppendHeader(nil, h)
	content = append(content, '\n')
	content = append(content, lines...)
	tmp, err := dshWriteTemp(l.fs, path, content)
	if err != nil {
		return err
	}
	defer func() { _ = l.fs.Remove(tmp) }()
	if err := l.fs.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("jsonl: refusing to materialize %q: a log already exists on disk (load/resume it instead): %w", h.ID, adapters.ErrSessionExists)
		}
		return fmt.Errorf("jsonl: publish %s: %w", path, err)
	}
	if err := l.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("jsonl: sync %s: %w", dir, err)
	}
	return nil
}

func dshLines(recs []dsh.Record) []byte {
	b := make([]byte, 0, dshLinesSize(recs))
	for _, r := range recs {
		b = dsh.AppendRecord(b, r)
		b = append(b, '\n')
	}
	return b
}

// dshLinesSize is about the length of recs as lines, so building them
// allocates once: the data, the type, and the envelope's keys, numbers and
// newline (at most 76 bytes).
func dshLinesSize(recs []dsh.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Data) + len(r.Type) + 76
	}
	return n
}

// dshWriteTemp writes data to a fresh exclusive temp file next to final and
// fsyncs it, returning its name.
func dshWriteTemp(fsys vfs.FS, final string, data []byte) (string, error) {
	return dshWriteTempFrom(fsys, final, data, nil, 0)
}

// dshWriteTempFrom is dshWriteTemp for data, or, when src is not nil, for
// the first size bytes of src.
func dshWriteTempFrom(fsys vfs.FS, final string, data []byte, src io.ReaderAt, size int64) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("jsonl: temp name: %w", err)
	}
	// final + "." + hex(rnd) + ".tmp", built on the stack when it fits, so
	// the string is the only allocation.
	var buf [256]byte
	name := append(buf[:0], final...)
	name = append(name, '.')
	name = hex.AppendEncode(name, rnd[:])
	tmp := string(append(name, ".tmp"...))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("jsonl: create %s: %w", tmp, err)
	}
	var werr error
	if src != nil {
		// io.Copy's own 32 KiB buffer, or the whole copy when it is smaller:
		// either way the same reads and writes, without a 32 KiB allocation
		// per evidence copy of a short log.
		buf := make([]byte, max(min(size, 32<<10), 1))
		_, werr = io.CopyBuffer(f, io.NewSectionReader(src, 0, size), buf)
	} else if len(data) > 0 {
		// What io.Copy from a bytes.Reader does: one write of everything.
		var n int
		if n, werr = f.Write(data); werr == nil && n != len(data) {
			werr = io.ErrShortWrite
		}
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = fsys.Remove(tmp)
		return "", fmt.Errorf("jsonl: write %s: %w", tmp, werr)
	}
	return tmp, nil
}

var errDSHRollback = errors.New("roll back")

// dshAppendLines appends lines at the end of path and fsyncs; on failure it
// truncates back to the size before the write, so a retry neither gaps nor
// duplicates.
func dshAppendLines(fsys vfs.FS, path string, lines []byte) (err error) {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("jsonl: open %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("jsonl: close %s: %w", path, cerr)
		}
	}()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("jsonl: stat %s: %w", path, err)
	}
	before := info.Size()
	_, werr := f.Write(lines)
	if werr == nil {
		werr = f.Sync()
	}
	if werr != nil {
		if terr := f.Truncate(before); terr == nil {
			_ = f.Sync()
		} else {
			werr = errors.Join(werr, fmt.Errorf("%w to %d bytes: %w", errDSHRollback, before, terr))
		}
		return fmt.Errorf("jsonl: append %s: %w", path, werr)
	}
	return nil
}

// dshMkdirDurable creates dir (0700) and fsyncs the parent of every directory
// it created, so the new bucket survives a crash along with the file in it.
func dshMkdirDurable(fsys vfs.FS, root, dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("jsonl: %w", err)
		}
		missing = append(missing, d)
		if p := filepath.Dir(d); p == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("jsonl: mkdir %s: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(missing[i])); err != nil {
			return fmt.Errorf("jsonl: sync %s: %w", filepath.Dir(missing[i]), err)
		}
	}
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

// DSHRecovery is what loading one log file found and did.
type DSHRecovery struct {
	Header dsh.Header
	// Events is the balanced log: the preserved events and the closers.
	Events []dsh.Record
	Repair adapters.Repair
}

// RecoverDSHLog loads one dsh v1 log file the way DSHLog.Load does,
// repairing it in place:
//
//  1. Scan (dsh's scanLog, deepseek-dsh.md §2.2). Only newline-terminated
//     lines count; a final segment without a newline is the torn fragment
//     even if it is complete JSON. Line 1 must be a session header. Events
//     are preserved while each parses and has seq equal to its index. At the
//     first hole (unparsable, empty or over-long line) or seq mismatch the
//     scan stops — but if that line or any later one is a turn/end, the hole
//     is inside the committed region and the log is unloadable: an error
//     wrapping adapters.ErrCorruptLog names its line and byte offset, and the
//     file is not touched.
//  2. Version: a header version other than 1 fails with
//     adapters.ErrUnsupportedVersion (after the scan, as in dsh, so
//     corruption is reported first).
//  3. Closers for an open turn (projections/turns).
//  4. If bytes follow the last preserved line: copy the whole original file
//     to <path>.broken-<size> durably, then truncate to the preserved prefix
//     and fsync.
//  5. Append the closers durably.
func RecoverDSHLog(fsys vfs.FS, path string) (DSHRecovery, error) {
	return recoverDSHLog(fsys, path, 0)
}

func recoverDSHLog(fsys vfs.FS, path string, maxLine int) (DSHRecovery, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return DSHRecovery{}, fmt.Errorf("jsonl: %s: %w", path, adapters.ErrNotFound)
		}
		return DSHRecovery{}, fmt.Errorf("jsonl: open %s: %w", path, err)
	}
	scan, err := dshScan(f, maxLine)
	f.Close()
	if err != nil {
		return DSHRecovery{}, fmt.Errorf("jsonl: %s: %w", path, err)
	}
	if scan.header.Version != dsh.Version {
		return DSHRecovery{}, fmt.Errorf("jsonl: %s: %w %s for %q (only v1 is supported)", path,
			adapters.ErrUnsupportedVersion, strconv.FormatFloat(scan.header.Version, 'f', -1, 64), scan.header.ID)
	}
	closers, err := turns.Closers(scan.events)
	if err != nil {
		return DSHRecovery{}, fmt.Errorf("jsonl: %s: cannot close the open turn: %w: %w", path, adapters.ErrCorruptLog, err)
	}
	out := DSHRecovery{Header: scan.header, Events: scan.events}
	if scan.committed < scan.size {
		evidence, err := dshKeepEvidence(fsys, path, scan.size)
		if err != nil {
			return DSHRecovery{}, err
		}
		if err := dshTruncate(fsys, path, scan.committed); err != nil {
			return DSHRecovery{}, err
		}
		out.Repair.TruncatedBytes = scan.size - scan.committed
		out.Repair.Evidence = evidence
	}
	if len(closers) > 0 {
		if err := dshAppendLines(fsys, path, dshLines(closers)); err != nil {
			return DSHRecovery{}, err
		}
		out.Events = append(out.Events, closers...)
		out.Repair.Closers = closers
	}
	return out, nil
}

type dshScanResult struct {
	header    dsh.Header
	events    []dsh.Record
	committed int64 // end of the last preserved line (or of the header)
	size      int64
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// dshHole is the first line the scan could not preserve.
type dshHole struct {
	pos    events.Position
	index  int
	detail string
}

func dshScan(r io.Reader, maxLine int) (dshScanResult, error) {
	cr := &countingReader{r: r}
	var (
		res       dshScanResult
		sawHeader bool
		hole      *dshHole
		endAfter  bool   // a turn/end at or after the hole
		arena     []byte // holds the events' data: an allocation per few KiB, not per line
	)
	for line, err := range events.Lines(cr, maxLine) {
		if err != nil {
			return res, fmt.Errorf("read: %w", err)
		}
		if !line.Terminated {
			break // the torn fragment: never a line
		}
		end := line.Pos.Offset + line.Size + 1
		if !sawHeader {
			sawHeader = true
			if line.TooLong {
				return res, fmt.Errorf("%s: %w: header line exceeds %d bytes", line.Pos, adapters.ErrCorruptLog, maxLineOrDefault(maxLine))
			}
			h, err := dsh.ParseHeader(line.Bytes)
			if errors.Is(err, dsh.ErrNotJSON) {
				return res, fmt.Errorf("%s: %w: header line is not valid JSON", line.Pos, adapters.ErrCorruptLog)
			} else if err != nil {
				return res, fmt.Errorf("%s: %w: first line is not a session header", line.Pos, adapters.ErrCorruptLog)
			}
			res.header, res.committed = h, end
			continue
		}
		if hole != nil {
			if !endAfter && !line.TooLong && dshIsTurnEnd(line.Bytes) {
				endAfter = true
			}
			continue
		}
		i := len(res.events)
		var rec dsh.Record
		var perr error
		if line.TooLong {
			perr = fmt.Errorf("line of %d bytes exceeds %d", line.Size, maxLineOrDefault(maxLine))
		} else {
			rec, arena, perr = dsh.ParseRecordAppend(arena, line.Bytes)
		}
		switch {
		case perr != nil:
			hole = &dshHole{pos: line.Pos, index: i, detail: fmt.Sprintf("unparsable committed event (event %d): %v", i, perr)}
			endAfter = !line.TooLong && dshIsTurnEnd(line.Bytes)
		case rec.Seq != int64(i):
			hole = &dshHole{pos: line.Pos, index: i, detail: fmt.Sprintf("seq gap in committed region (expected %d, got %d)", i, rec.Seq)}
			endAfter = rec.Type == dsh.TypeTurnEnd
		default:
			res.events = append(res.events, rec)
			res.committed = end
		}
	}
	res.size = cr.n
	if !sawHeader {
		return res, fmt.Errorf("%w: empty or header-less session log", adapters.ErrCorruptLog)
	}
	if hole != nil && endAfter {
		return res, fmt.Errorf("%s: %w: %s", hole.pos, adapters.ErrCorruptLog, hole.detail)
	}
	return res, nil
}

// dshIsTurnEnd is dsh's test for the last turn/end: the line parses as JSON
// and its type is turn/end — looser than a valid record on purpose, so a
// damaged but recognisable turn/end still marks the region before it as
// committed.
func dshIsTurnEnd(line []byte) bool {
	if !bytes.Contains(line, []byte("turn/end")) {
		return false
	}
	var v struct {
		Type string `json:"type"`
	}
	if !json.Valid(line) || json.Unmarshal(line, &v) != nil {
		return false
	}
	return v.Type == dsh.TypeTurnEnd
}

func maxLineOrDefault(n int) int {
	if n <= 0 {
		return events.DefaultMaxLineBytes
	}
	return n
}

// dshKeepEvidence copies the whole log to <path>.broken-<size> (or
// .broken-<size>.<n> if a different copy already holds that name) through a
// temp file, fsync, link and directory fsync, and returns the copy's path.
// It runs before any byte is cut, so a repair can always be audited.
func dshKeepEvidence(fsys vfs.FS, path string, size int64) (string, error) {
	src, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("jsonl: evidence: open %s: %w", path, err)
	}
	defer src.Close()
	original := io.NewSectionReader(src, 0, size)
	base := path + ".broken-" + strconv.FormatInt(size, 10)
	for n := 0; n < 100; n++ {
		name := base
		if n > 0 {
			name += "." + strconv.Itoa(n)
		}
		if ok, err := dshSameContent(fsys, name, original, size); err != nil {
			return "", err
		} else if ok {
			return name, nil
		}
		if _, err := fsys.Stat(name); err == nil {
			continue // a different copy holds this name
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("jsonl: evidence: %w", err)
		}
		tmp, err := dshWriteTempFrom(fsys, name, nil, src, size)
		if err != nil {
			return "", err
		}
		err = fsys.Link(tmp, name)
		_ = fsys.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			n--
			continue // lost a race: compare again
		}
		if err != nil {
			return "", fmt.Errorf("jsonl: evidence: publish %s: %w", name, err)
		}
		if err := fsys.SyncDir(filepath.Dir(name)); err != nil {
			return "", fmt.Errorf("jsonl: evidence: sync: %w", err)
		}
		return name, nil
	}
	return "", fmt.Errorf("jsonl: evidence: too many copies of %s", path)
}

func dshSameContent(fsys vfs.FS, name string, original *io.SectionReader, size int64) (bool, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("jsonl: evidence: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() != size {
		return false, nil
	}
	a := make([]byte, 32<<10)
	b := make([]byte, 32<<10)
	for off := int64(0); off < size; {
		n := int64(len(a))
		if size-off < n {
			n = size - off
		}
		if _, err := original.ReadAt(a[:n], off); err != nil {
			return false, fmt.Errorf("jsonl: evidence: %w", err)
		}
		if _, err := f.ReadAt(b[:n], off); err != nil {
			return false, nil
		}
		if !bytes.Equal(a[:n], b[:n]) {
			return false, nil
		}
		off += n
	}
	return true, nil
}

func dshTruncate(fsys vfs.FS, path string, size int64) error {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("jsonl: repair %s: %w", path, err)
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("jsonl: repair %s: truncate to %d: %w", path, size, err)
	}
	return nil
}
