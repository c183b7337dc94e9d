package vfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// File is an open file.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Seeker
	io.Closer
	Name() string
	Stat() (fs.FileInfo, error)
	Sync() error
	Truncate(size int64) error
}

// FS is what the adapters need of a filesystem. Paths are OS paths.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Stat(name string) (fs.FileInfo, error)
	Rename(oldpath, newpath string) error
	// Link publishes oldpath at newpath, failing with fs.ErrExist if newpath
	// exists (so a concurrent publish cannot clobber).
	Link(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(path string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes a directory's entries (creates, renames) durable.
	SyncDir(name string) error
	// Lock takes an exclusive lock on name (creating it if needed), blocking
	// until it is free. It excludes other processes as well as this one.
	Lock(name string) (Unlocker, error)
}

// Unlocker releases a lock.
type Unlocker interface{ Unlock() error }

// OS is the real filesystem.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (osFS) Rename(a, b string) error                   { return os.Rename(a, b) }
func (osFS) Link(a, b string) error                     { return os.Link(a, b) }
func (osFS) Remove(name string) error                   { return os.Remove(name) }
func (osFS) MkdirAll(p string, perm fs.FileMode) error  { return os.MkdirAll(p, perm) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isUnsupported(err) {
		return err
	}
	return nil
}

func isUnsupported(err error) bool {
	return err == syscall.EINVAL || err == syscall.ENOTSUP
}

// Lock uses flock(2) on a separate lock file, so it excludes other processes
// and other open file descriptions in this process. A lock path that is not
// a regular file (a FIFO or device planted there) is refused.
func (osFS) Lock(name string) (Unlocker, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|nonblock, 0o600)
	if err != nil {
		return nil, err
	}
	return lockFile(f)
}

// nonblock keeps an open from blocking on a FIFO; see OpenRegular.
const nonblock = syscall.O_NONBLOCK

// lockFile takes the exclusive flock on an open lock file, closing it on
// failure.
func lockFile(f *os.File) (Unlocker, error) {
	st, err := f.Stat()
	if err == nil {
		err = CheckRegular(f.Name(), st)
	}
	for err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
		err = nil
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return osLock{f}, nil
}

type osLock struct{ f *os.File }

func (l osLock) Unlock() error {
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
