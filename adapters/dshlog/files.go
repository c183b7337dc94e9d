package dshlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/dsh"
)

// materialize writes the header and the first batch as a new log: temp file
// (exclusive, 0600), fsync, link to the final name — which fails rather than
// clobbers if a log appeared meanwhile — then a directory fsync.
func (l *Log) materialize(path string, h dsh.Header, lines []byte) error {
	dir := filepath.Dir(path)
	if err := mkdirDurable(l.fs, l.root, dir); err != nil {
		return err
	}
	if ok, err := l.exists(path); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("dshlog: refusing to materialize %q: a log already exists on disk (load/resume it instead): %w", h.ID, adapters.ErrSessionExists)
	}
	content := dsh.AppendHeader(nil, h)
	content = append(content, '\n')
	content = append(content, lines...)
	tmp, err := writeTemp(l.fs, path, content)
	if err != nil {
		return err
	}
	defer func() { _ = l.fs.Remove(tmp) }()
	if err := l.fs.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("dshlog: refusing to materialize %q: a log already exists on disk (load/resume it instead): %w", h.ID, adapters.ErrSessionExists)
		}
		return fmt.Errorf("dshlog: publish %s: %w", path, err)
	}
	if err := l.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("dshlog: sync %s: %w", dir, err)
	}
	return nil
}

func encodeLines(recs []dsh.Record) []byte {
	b := make([]byte, 0, linesSize(recs))
	for _, r := range recs {
		b = dsh.AppendRecord(b, r)
		b = append(b, '\n')
	}
	return b
}

// linesSize is about the length of recs as lines, so building them
// allocates once: the data, the type, and the envelope's keys, numbers and
// newline (at most 76 bytes).
func linesSize(recs []dsh.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Data) + len(r.Type) + 76
	}
	return n
}

// writeTemp writes data to a fresh exclusive temp file next to final and
// fsyncs it, returning its name.
func writeTemp(fsys vfs.FS, final string, data []byte) (string, error) {
	return writeTempFrom(fsys, final, data, nil, 0)
}

// writeTempFrom is writeTemp for data, or, when src is not nil, for
// the first size bytes of src.
func writeTempFrom(fsys vfs.FS, final string, data []byte, src io.ReaderAt, size int64) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("dshlog: temp name: %w", err)
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
		return "", fmt.Errorf("dshlog: create %s: %w", tmp, err)
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
		return "", fmt.Errorf("dshlog: write %s: %w", tmp, werr)
	}
	return tmp, nil
}

var errRollback = errors.New("roll back")

// appendLines appends lines at the end of path and fsyncs; on failure it
// truncates back to the size before the write, so a retry neither gaps nor
// duplicates.
func appendLines(fsys vfs.FS, path string, lines []byte) (err error) {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("dshlog: open %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("dshlog: close %s: %w", path, cerr)
		}
	}()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("dshlog: stat %s: %w", path, err)
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
			werr = errors.Join(werr, fmt.Errorf("%w to %d bytes: %w", errRollback, before, terr))
		}
		return fmt.Errorf("dshlog: append %s: %w", path, werr)
	}
	return nil
}

// mkdirDurable creates dir (0700) and fsyncs the parent of every directory
// it created, so the new bucket survives a crash along with the file in it.
func mkdirDurable(fsys vfs.FS, root, dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("dshlog: %w", err)
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
		return fmt.Errorf("dshlog: mkdir %s: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(missing[i])); err != nil {
			return fmt.Errorf("dshlog: sync %s: %w", filepath.Dir(missing[i]), err)
		}
	}
	return nil
}
