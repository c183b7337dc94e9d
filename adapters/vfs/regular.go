package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// ErrNotRegular: a path names a directory, a FIFO, a device, a socket or
// anything else that is not a regular file. Session evidence is always a
// regular file; reading a FIFO blocks until a writer appears and reading
// /dev/zero never ends, so both are refused before a byte is read.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens name and refuses it, before any read or write, unless it
// is a regular file. The open adds O_NONBLOCK, so that opening a FIFO with
// no writer returns at once instead of blocking; the type is then checked on
// the open descriptor (fstat), so nothing can swap the file between check
// and use. O_NONBLOCK has no effect on a regular file's reads and writes.
// The error wraps ErrNotRegular and names what the path is instead.
func OpenRegular(fsys FS, name string, flag int, perm fs.FileMode) (File, error) {
	f, err := fsys.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.EISDIR) {
		// A directory opened for writing fails before there is a
		// descriptor to check.
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: it is a directory", ErrNotRegular)}
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := CheckRegular(name, st); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckRegular returns an error wrapping ErrNotRegular unless info describes
// a regular file.
func CheckRegular(name string, info fs.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, Describe(info.Mode()))}
}

// Describe names a file type for an error message: "a directory", "a named
// pipe (FIFO)", "a character device"...
func Describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file (mode " + m.String() + ")"
}
