package harnessfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// RepairAction is what Repair did to a session file.
type RepairAction string

const (
	// RepairNone: the file ends on a line boundary (or is empty).
	RepairNone RepairAction = "none"
	// RepairTerminated: the final record was written whole but for its
	// newline; the newline was appended, so the harness's next record
	// starts a line of its own.
	RepairTerminated RepairAction = "terminated"
	// RepairCut: the final segment was a fragment never written whole; its
	// bytes were copied aside (Evidence) and cut, so the file ends at its
	// last whole line.
	RepairCut RepairAction = "cut"
)

// ErrRepairRefused: the final segment is one Repair will not touch — it
// holds whole records glued to a torn one, or it is too long to check.
// Nothing was written.
var ErrRepairRefused = errors.New("repair refused")

// ErrFileChanged: the session file changed while Repair worked, so a writer
// is alive. Nothing was cut.
var ErrFileChanged = errors.New("session file changed during repair")

// RepairResult reports a Repair.
type RepairResult struct {
	Action RepairAction
	// Offset and Bytes locate the final segment that had no newline.
	Offset, Bytes int64
	// Evidence is the copy of the cut fragment (RepairCut only):
	// <file>.torn-<offset>, holding exactly the bytes that stood at Offset.
	Evidence string
	// Size is the file's size afterwards.
	Size int64
}

// RepairOptions configure Repair.
type RepairOptions struct {
	// MaxLineBytes bounds the final segment Repair will read to check
	// (<= 0: events.DefaultMaxLineBytes); a longer one is refused.
	MaxLineBytes int
	// WriterLive, when set, is asked before anything is written; an error
	// refuses the repair.
	WriterLive func(ctx context.Context) error
}

// Repair is the one operation that writes a harness's own session file. It
// only ever touches a final segment without a newline — bytes after the last
// whole line — so the harness's next append cannot fuse with it (Codex and
// Claude Code before 2.1.328 append after whatever bytes are there):
//
//   - a final segment the harness's loader reads as a record (it decodes
//     whole; for Claude Code, after the NUL bytes its 2.1.328 loader strips
//     from a line's start) gets its newline: one byte appended, fsynced;
//   - a fragment never written whole is first copied to <file>.torn-<offset>
//     (temp file, fsync, link, directory fsync), then cut: the file is
//     truncated to its last whole line and fsynced;
//   - a segment holding whole records glued to a torn one, or one too long
//     to check, is refused (ErrRepairRefused), nothing written.
//
// No committed line is ever rewritten or removed, and tailproof's verdicts
// on the file are the same after a repair as before (a fragment never
// written whole is discarded by the reader either way). Running Repair
// asserts that the harness's writer is gone; a file that changes meanwhile
// is left uncut (ErrFileChanged). ADR 0024 says why a cut, not a newline,
// closes a torn fragment.
func Repair(ctx context.Context, fsys vfs.FS, path string, h turn.Harness, o RepairOptions) (RepairResult, error) {
	var res RepairResult
	if err := regularFile(fsys, path); err != nil {
		return res, err
	}
	if err := regularOrMissing(fsys, SidecarPath(path)+".lock"); err != nil {
		return res, err
	}
	lk, err := fsys.Lock(SidecarPath(path) + ".lock")
	if err != nil {
		return res, fmt.Errorf("harnessfs: repair %s: lock: %w", path, err)
	}
	defer lk.Unlock()
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return res, fmt.Errorf("harnessfs: repair: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return res, fmt.Errorf("harnessfs: repair %s: %w", path, err)
	}
	size := st.Size()
	res.Size = size
	max := o.MaxLineBytes
	if max <= 0 {
		max = events.DefaultMaxLineBytes
	}
	seg, off, err := finalSegment(f, size, int64(max))
	if err != nil {
		return res, fmt.Errorf("harnessfs: repair %s: %w", path, err)
	}
	res.Offset, res.Bytes = off, size-off
	if off == size {
		res.Action = RepairNone
		return res, nil
	}
	if seg == nil {
		return res, fmt.Errorf("harnessfs: repair %s: %w: the final segment at offset %d is over %d bytes", path, ErrRepairRefused, off, max)
	}
	action, err := planSeal(h, seg, off)
	if err != nil {
		return res, fmt.Errorf("harnessfs: repair %s: %w", path, err)
	}
	if o.WriterLive != nil {
		if err := o.WriterLive(ctx); err != nil {
			return res, err
		}
	}
	if action == RepairCut {
		res.Evidence, err = keepAside(fsys, path, off, seg)
		if err != nil {
			return res, fmt.Errorf("harnessfs: repair %s: keep the fragment: %w", path, err)
		}
	}
	if err := unchanged(f, size); err != nil {
		return res, fmt.Errorf("harnessfs: repair %s: %w", path, err)
	}
	switch action {
	case RepairTerminated:
		_, err := f.Seek(size, io.SeekStart)
		if err == nil {
			_, err = f.Write([]byte{'\n'})
		}
		if err != nil {
			return res, fmt.Errorf("harnessfs: repair %s: write: %w", path, err)
		}
		res.Size = size + 1
	case RepairCut:
		if err := f.Truncate(off); err != nil {
			return res, fmt.Errorf("harnessfs: repair %s: truncate: %w", path, err)
		}
		res.Size = off
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("harnessfs: repair %s: fsync: %w", path, err)
	}
	res.Action = action
	return res, nil
}

// finalSegment returns the bytes after the file's last newline and their
// offset; seg is nil (with off set) when they are longer than limit.
func finalSegment(f vfs.File, size, limit int64) (seg []byte, off int64, err error) {
	const chunk = 64 << 10
	buf := make([]byte, min(chunk, size))
	end := size
	for end > 0 {
		start := max(0, end-int64(len(buf)))
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !(errors.Is(err, io.EOF) && int64(n) == end-start) {
			return nil, 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			off = start + int64(i) + 1
			break
		}
		end = start
		if size-end > limit {
			// No newline within max bytes of the end: report where the
			// segment would start only as far as we looked.
			return nil, end, nil
		}
	}
	if size-off > limit {
		return nil, off, nil
	}
	seg = make([]byte, size-off)
	if _, err := f.ReadAt(seg, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return seg, off, nil
}

// planSeal decides how the final segment seg (at off, no newline) is
// closed: the harness's loader would read it as a record (terminate), or it
// is a fragment never written whole (cut).
func planSeal(h turn.Harness, seg []byte, off int64) (RepairAction, error) {
	body := seg
	if h.Name == "claude" {
		// Claude Code 2.1.328's loader skips the NUL bytes a crashed
		// append leaves at a line's start, then parses the rest.
		body = bytes.TrimLeft(body, "\x00")
	}
	if len(body) == 0 {
		return RepairCut, nil
	}
	line := events.Line{Bytes: body, Pos: events.Position{Offset: off}, Size: int64(len(body))}
	evs, err := h.Codec.DecodeLine(nil, line)
	switch {
	case err == nil && len(evs) > 0:
		return RepairTerminated, nil
	case err != nil && len(evs) > 0:
		return "", fmt.Errorf("%w: the final segment at offset %d holds %d whole records glued to a torn one", ErrRepairRefused, off, len(evs))
	}
	return RepairCut, nil
}

// keepAside copies the fragment to <path>.torn-<off> durably (temp file,
// fsync, link, directory fsync). An existing copy with the same bytes is
// reused; a different one keeps its name and the copy takes .torn-<off>.<n>.
func keepAside(fsys vfs.FS, path string, off int64, seg []byte) (string, error) {
	base := path + ".torn-" + strconv.FormatInt(off, 10)
	dir := filepath.Dir(path)
	for n := 0; n < 100; n++ {
		name := base
		if n > 0 {
			name = base + "." + strconv.Itoa(n)
		}
		same, err := sameContent(fsys, name, seg)
		if err != nil {
			return "", err
		}
		if same {
			return name, nil
		}
		if _, err := fsys.Stat(name); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		tmp := name + ".tmp"
		if err := writeSynced(fsys, tmp, seg); err != nil {
			return "", err
		}
		err = fsys.Link(tmp, name)
		rmErr := fsys.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if rmErr != nil {
			return "", rmErr
		}
		if err := fsys.SyncDir(dir); err != nil {
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("too many evidence copies at %s", base)
}

func sameContent(fsys vfs.FS, name string, want []byte) (bool, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(want)) {
		return false, err
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(f, got); err != nil {
		return false, err
	}
	return bytes.Equal(got, want), nil
}

func writeSynced(fsys vfs.FS, name string, b []byte) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func unchanged(f vfs.File, size int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != size {
		return fmt.Errorf("%w: %d bytes, was %d", ErrFileChanged, st.Size(), size)
	}
	return nil
}
