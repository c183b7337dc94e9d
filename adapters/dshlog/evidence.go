package dshlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// keepEvidence copies the whole log to <path>.broken-<size> (or
// .broken-<size>.<n> if a different copy already holds that name) through a
// temp file, fsync, link and directory fsync, and returns the copy's path.
// It runs before any byte is cut, so a repair can always be audited.
func keepEvidence(fsys vfs.FS, path string, size int64) (string, error) {
	src, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("dshlog: evidence: open %s: %w", path, err)
	}
	defer src.Close()
	original := io.NewSectionReader(src, 0, size)
	base := path + ".broken-" + strconv.FormatInt(size, 10)
	for n := 0; n < 100; n++ {
		name := base
		if n > 0 {
			name += "." + strconv.Itoa(n)
		}
		if ok, err := sameContent(fsys, name, original, size); err != nil {
			return "", err
		} else if ok {
			return name, nil
		}
		if _, err := fsys.Stat(name); err == nil {
			continue // a different copy holds this name
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("dshlog: evidence: %w", err)
		}
		tmp, err := writeTempFrom(fsys, name, nil, src, size)
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
			return "", fmt.Errorf("dshlog: evidence: publish %s: %w", name, err)
		}
		if err := fsys.SyncDir(filepath.Dir(name)); err != nil {
			return "", fmt.Errorf("dshlog: evidence: sync: %w", err)
		}
		return name, nil
	}
	return "", fmt.Errorf("dshlog: evidence: too many copies of %s", path)
}

func sameContent(fsys vfs.FS, name string, original *io.SectionReader, size int64) (bool, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("dshlog: evidence: %w", err)
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
			return false, fmt.Errorf("dshlog: evidence: %w", err)
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

func truncateDurable(fsys vfs.FS, path string, size int64) error {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("dshlog: repair %s: %w", path, err)
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dshlog: repair %s: truncate to %d: %w", path, size, err)
	}
	return nil
}
