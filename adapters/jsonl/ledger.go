package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// ErrInvalidLine: AppendLedger was handed something that is not one record
// line (empty, or holding a newline that would split it in two).
var ErrInvalidLine = errors.New("jsonl: ledger line must be non-empty and hold no newline")

// ErrNotAppended marks a failed append that left the ledger exactly as it
// was: it failed before writing a byte, or its bytes — a short write's
// fragment (ENOSPC, EIO) or a whole batch whose fsync failed — were cut off
// again and the cut synced. A failed append without it may have left its
// bytes in the file (ADR 0004: "maybe written"); the next append seals a
// fragment off.
var ErrNotAppended = errors.New("not appended: the ledger is as it was")

// AppendStats counts what the ledger writer did, for benchmarks and for
// checking that group commit batches: Appends records were written in
// Batches write+fsync rounds; FileSyncs and DirSyncs count fsync calls.
type AppendStats struct {
	Appends, Batches, FileSyncs, DirSyncs int64
}

type stats struct{ appends, batches, fileSyncs, dirSyncs atomic.Int64 }

// ledgerWriter serializes appends to one ledger path in this process and
// batches them: whoever finds the writer idle becomes the leader and commits
// everything queued (one write, one fsync) until the queue is empty, then
// hands leadership to the next arrival. No caller returns before the round
// holding its line is synced, so batching never weakens durability; it only
// shares an fsync among appenders who were waiting anyway.
type ledgerWriter struct {
	path, lock, dir string
	mu              sync.Mutex
	queue           []*pendingAppend
	busy            bool
	// dirDurable is set once this process has synced the ledger's directory
	// chain; until then the file's entry may exist only in the page cache
	// (created by a process that died before its directory sync).
	dirDurable bool
}

type pendingAppend struct {
	line []byte
	// lines, when set, replaces line: a run of already-checked lines
	// written in this entry's place (FilesStore.AppendLedgerSeq).
	lines iter.Seq[[]byte]
	done  chan appendResult
}

type appendResult struct {
	err  error
	lead bool // the receiver is now the leader and must commit the queue
}

func (s *QwenStore) writer(path, lock string) *ledgerWriter {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.writers[path]
	if !ok {
		w = &ledgerWriter{path: path, lock: lock, dir: filepath.Dir(path)}
		if s.writers == nil {
			s.writers = map[string]*ledgerWriter{}
		}
		s.writers[path] = w
	}
	return w
}

// appendLine is the group-commit entry point.
func (s *QwenStore) appendLine(w *ledgerWriter, line []byte) error {
	return s.appendEntry(w, &pendingAppend{line: line, done: make(chan appendResult, 1)})
}

// appendLines queues checked lines as one entry: they are written in one
// round.
func (s *QwenStore) appendLines(w *ledgerWriter, lines iter.Seq[[]byte]) error {
	return s.appendEntry(w, &pendingAppend{lines: lines, done: make(chan appendResult, 1)})
}

func (s *QwenStore) appendEntry(w *ledgerWriter, p *pendingAppend) error {
	w.mu.Lock()
	w.queue = append(w.queue, p)
	if w.busy {
		w.mu.Unlock()
		r := <-p.done
		if !r.lead {
			return r.err
		}
	} else {
		w.busy = true
		w.mu.Unlock()
	}
	// Leader: commit rounds until our own line is done, then pass the baton.
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		err := s.commit(w, batch)
		mine := false
		for _, b := range batch {
			if b == p {
				mine = true
				continue
			}
			b.done <- appendResult{err: err}
		}
		if mine {
			w.mu.Lock()
			if len(w.queue) == 0 {
				w.busy = false
			} else {
				// Whoever queued first while we were committing leads the
				// next round (which includes its own line).
				w.queue[0].done <- appendResult{lead: true}
			}
			w.mu.Unlock()
			return err
		}
	}
}

// commit writes one batch durably under the cross-process lock: seal a torn
// tail, write every line with its newline (one write for a round of up to
// writeChunk bytes, else several, each ending at a line's end), fsync the
// file once, and fsync the directory chain when the file was just created
// or this process has not yet made its entry durable. A failed write or
// fsync cuts the whole round back (rollback), so several writes are as all
// or nothing as one.
func (s *QwenStore) commit(w *ledgerWriter, batch []*pendingAppend) (err error) {
	fail := func(step string, e error) error {
		// Whatever this round left half-done (a directory or file entry not
		// yet synced), the next round re-syncs the whole chain.
		w.dirDurable = false
		return fmt.Errorf("jsonl: ledger %s: %s: %w", w.path, step, e)
	}
	// Until the write, a failure leaves the ledger untouched.
	untouched := func(e error) error { return fmt.Errorf("%w (%w)", e, ErrNotAppended) }
	if _, err := s.ensureDir(w.dir); err != nil {
		return fail("create directory", untouched(err))
	}
	lk, err := s.fs.Lock(w.lock)
	if err != nil {
		return fail("lock", untouched(err))
	}
	defer func() {
		if uerr := lk.Unlock(); uerr != nil && err == nil {
			err = fail("unlock", uerr)
		}
	}()
	f, fileCreated, err := openLedgerForAppend(s.fs, w.path)
	if err != nil {
		return fail("open", untouched(err))
	}
	defer f.Close()
	size, sealed, err := needsSeal(f)
	if err != nil {
		return fail("seal check", untouched(err))
	}
	cw := chunkWriter{f: f}
	if sealed {
		cw.buf = append(cw.buf, '\n')
	}
	for _, b := range batch {
		if b.lines == nil {
			cw.line(b.line)
			continue
		}
		for l := range b.lines {
			if !cw.line(l) {
				break
			}
		}
	}
	if cw.flush(); cw.err != nil {
		return fail("write", rollback(f, size, cw.wrote, cw.err))
	}
	s.stats.fileSyncs.Add(1)
	if err := f.Sync(); err != nil {
		return fail("fsync", rollback(f, size, cw.wrote, err))
	}
	if fileCreated || !w.dirDurable {
		if err := s.syncDirChain(w.dir); err != nil {
			return fail("fsync directory", err)
		}
		w.dirDurable = true
	}
	s.stats.batches.Add(1)
	s.stats.appends.Add(int64(len(batch)))
	return nil
}

// writeChunk bounds the bytes a round holds in memory: a larger round is
// written in several writes, each ending at a line's end, so that a writer
// not taking the lock (Qwen's daemon, on Qwen's ledger) can only land
// between whole lines.
const writeChunk = 256 << 10

// chunkWriter writes a round's lines through a buffer of at most about
// writeChunk bytes; wrote counts the bytes that reached the file, for the
// rollback, and err is the first write error (after it, nothing more is
// written).
type chunkWriter struct {
	f     vfs.File
	buf   []byte
	wrote int64
	err   error
}

func (c *chunkWriter) line(l []byte) bool {
	if c.err != nil {
		return false
	}
	if len(c.buf) > 0 && len(c.buf)+len(l)+1 > writeChunk {
		c.flush()
	}
	c.buf = append(append(c.buf, l...), '\n')
	return c.err == nil
}

func (c *chunkWriter) flush() {
	if c.err != nil || len(c.buf) == 0 {
		return
	}
	n, err := c.f.Write(c.buf)
	c.wrote += int64(n)
	if err == nil && n < len(c.buf) {
		err = io.ErrShortWrite
	}
	c.buf, c.err = c.buf[:0], err
}

// rollback undoes a round whose write or fsync failed, so that a record
// reported as not appended is not in the ledger — neither as a fragment (a
// short write: ENOSPC, EIO) nor whole (written, but its fsync failed, so it
// may or may not reach the disk). The file is cut back to its size before
// the round (seal included) and the cut is synced; the error then wraps
// ErrNotAppended as well as cause. The cut is made only when the file is
// exactly as long as this round left it: a writer that does not take the
// lock (Qwen's daemon) may have appended since, and its bytes are not ours
// to cut. Then, or when the cut itself fails, the bytes stay — a fragment is
// one malformed line the readers drop and the next append seals off — and
// the error says so.
func rollback(f vfs.File, pre, wrote int64, cause error) error {
	if wrote == 0 {
		return fmt.Errorf("%w (%w: nothing was written)", cause, ErrNotAppended)
	}
	left := func(why error) error {
		return fmt.Errorf("%w; not rolled back, so %d bytes of this append remain at offset %d until the next append seals them off: %w", cause, wrote, pre, why)
	}
	st, err := f.Stat()
	if err != nil {
		return left(err)
	}
	if st.Size() != pre+wrote {
		return left(fmt.Errorf("the file is %d bytes, not the %d this append left: another writer appended meanwhile", st.Size(), pre+wrote))
	}
	if err := f.Truncate(pre); err != nil {
		return left(err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%w; cut back to %d bytes, but the cut was not synced, so after a power loss up to %d bytes of this append may be at offset %d until the next append seals them off: %w", cause, pre, wrote, pre, err)
	}
	return fmt.Errorf("%w (%w: cut back to %d bytes and synced)", cause, ErrNotAppended, pre)
}

// openLedgerForAppend opens (creating 0600) and reports whether this call
// created the file, which decides the directory fsync. Anything but a
// regular file is refused (vfs.ErrNotRegular): appending to a FIFO or a
// device loses the record.
func openLedgerForAppend(fsys vfs.FS, path string) (vfs.File, bool, error) {
	f, err := vfs.OpenRegular(fsys, path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	f, err = vfs.OpenRegular(fsys, path, os.O_RDWR|os.O_APPEND, 0)
	return f, false, err
}

// needsSeal returns the file's size and whether it is non-empty and does not
// end in '\n': a crash mid-append left a torn fragment that the next line
// must not fuse with.
func needsSeal(f vfs.File) (int64, bool, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	if st.Size() == 0 {
		return 0, false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil && !errors.Is(err, io.EOF) {
		return 0, false, err
	}
	return st.Size(), last[0] != '\n', nil
}

// ensureDir creates dir and its missing ancestors (0700) and makes each new
// entry durable by syncing the directory that holds it, top down, so a crash
// cannot drop a directory under a record that was acknowledged. It reports
// whether anything was created.
func (s *QwenStore) ensureDir(dir string) (bool, error) {
	var missing []string
	for d := filepath.Clean(dir); ; {
		st, err := s.fs.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return false, fmt.Errorf("%s is not a directory", d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
		missing = append(missing, d)
		parent := cleanParent(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(missing) == 0 {
		return false, nil
	}
	if err := s.fs.MkdirAll(dir, dirPerm); err != nil {
		return true, err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		s.stats.dirSyncs.Add(1)
		if err := s.fs.SyncDir(filepath.Dir(missing[i])); err != nil {
			return true, err
		}
	}
	return true, nil
}

// dirPerm is narrower than Qwen's (mkdirSync recursive, 0777 before umask):
// the directories hold session evidence nobody else should read.
const dirPerm fs.FileMode = 0o700

// syncDirChain fsyncs dir and every ancestor up to the root, so that each
// entry on the path to the ledger is durable — including directories that
// this process, or one that died, created without managing to sync them. It
// runs once per ledger per store (and again after a failed commit), not per
// append, so its handful of directory fsyncs is not on the hot path.
func (s *QwenStore) syncDirChain(dir string) error {
	// d is clean all the way up: filepath.Clean, then cleanParent.
	for d := filepath.Clean(dir); ; {
		s.stats.dirSyncs.Add(1)
		if err := s.fs.SyncDir(d); err != nil {
			return err
		}
		parent := cleanParent(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// cleanParent is filepath.Dir of a clean path: where '/' is the separator,
// everything before the last one ("/" for a child of the root, "." for a
// single element). filepath.Dir re-cleans its result, ~570 instructions at
// every level of every directory chain the simulator's stores walk;
// TestCleanParent holds the two equal on clean paths.
func cleanParent(d string) string {
	if filepath.Separator != '/' {
		return filepath.Dir(d)
	}
	switch i := strings.LastIndexByte(d, '/'); {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	default:
		return d[:i]
	}
}

// AppendLedger is the durable write-ahead append of one ledger line to the
// session's active ledger (see adapters.LedgerStore). Concurrent appenders in
// this process share fsyncs (group commit); other processes are excluded by
// a lock on <id>.ledger.lock. An error means the line may or may not be in
// the file; it is never reported durable when it is not. ctx is checked
// before the line is queued; once queued, the append runs to completion
// (bounded by the I/O), because abandoning it would leave the caller unsure
// of a record that may already be on disk.
func (s *QwenStore) AppendLedger(ctx context.Context, sessionID string, line []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jsonl: append ledger: %w", err)
	}
	if len(line) == 0 || bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("%w (session %q, %d bytes)", ErrInvalidLine, sessionID, len(line))
	}
	path, err := s.activePath(sessionID, ledgerExt)
	if err != nil {
		return err
	}
	lock, err := s.activePath(sessionID, lockExt)
	if err != nil {
		return err
	}
	return s.appendLine(s.writer(path, lock), bytes.Clone(line))
}

// OpenLedger streams the active ledger; a missing ledger is an empty reader.
func (s *QwenStore) OpenLedger(ctx context.Context, sessionID string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: open ledger: %w", err)
	}
	path, err := s.activePath(sessionID, ledgerExt)
	if err != nil {
		return nil, err
	}
	return openLedgerFile(s.fs, path)
}

// openLedgerFile opens a ledger for reading; a missing file reads as empty,
// anything but a regular file is refused (vfs.ErrNotRegular).
func openLedgerFile(fsys vfs.FS, path string) (io.ReadCloser, error) {
	f, err := vfs.OpenRegular(fsys, path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("jsonl: open ledger: %w", err)
	}
	return f, nil
}

// OpenLedgerTail streams at most the last n bytes of the active ledger;
// windowed reports that the file was longer than n (its first line is then
// partial by construction and the caller drops it, as the reference does).
// The window is fixed at open: bytes appended later are not read.
func (s *QwenStore) OpenLedgerTail(ctx context.Context, sessionID string, n int64) (io.ReadCloser, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("jsonl: open ledger tail: %w", err)
	}
	path, err := s.activePath(sessionID, ledgerExt)
	if err != nil {
		return nil, false, err
	}
	return openLedgerTailFile(s.fs, path, n)
}

// openLedgerTailFile opens at most the last n bytes of a ledger.
func openLedgerTailFile(fsys vfs.FS, path string, n int64) (io.ReadCloser, bool, error) {
	if n <= 0 {
		return nil, false, fmt.Errorf("jsonl: open ledger tail: window must be positive, got %d", n)
	}
	f, err := vfs.OpenRegular(fsys, path, os.O_RDONLY, 0)
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
	size := st.Size()
	if size <= n {
		return sectionCloser{io.NewSectionReader(f, 0, size), f}, false, nil
	}
	return sectionCloser{io.NewSectionReader(f, size-n, n), f}, true, nil
}

type sectionCloser struct {
	*io.SectionReader
	io.Closer
}

// Stats reports the ledger writer's counters since the store was made.
func (s *QwenStore) Stats() AppendStats {
	return AppendStats{
		Appends: s.stats.appends.Load(), Batches: s.stats.batches.Load(),
		FileSyncs: s.stats.fileSyncs.Load(), DirSyncs: s.stats.dirSyncs.Load(),
	}
}
