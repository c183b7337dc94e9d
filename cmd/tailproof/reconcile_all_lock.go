package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// errBusy: another process holds a session's ledger lock for longer than
// reconcile --all waits. The lock is tailproof's own (<id>.ledger.lock,
// flock(2)); Qwen Code 0.24.4 never takes it, so the holder is another
// tailproof — a daemon or a reconcile in the middle of its append.
var errBusy = errors.New("another process holds the ledger lock")

// lockWaitFS is the confined filesystem of reconcile --all with a bounded
// wait on the ledger lock. vfs.FS.Lock blocks until the lock is free, which
// is right for one session (the holder appends and lets go) but would let a
// live writer that keeps the lock stall a worker, and with it every session
// behind it. Lock here takes the same flock on the same file, without
// blocking, retrying until wait has passed; then the append fails with
// errBusy and that session alone is reported. A filesystem whose files have
// no descriptor (the memory FS of the crash tests) keeps its own Lock.
type lockWaitFS struct {
	vfs.FS
	wait time.Duration
}

type fder interface{ Fd() uintptr }

func (f lockWaitFS) Lock(name string) (vfs.Unlocker, error) {
	if err := f.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	// O_NONBLOCK keeps the open from blocking on a FIFO planted as the
	// lock file; the check below refuses it.
	file, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := file.Stat()
	if err == nil {
		err = vfs.CheckRegular(name, st)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	fd, ok := file.(fder)
	if !ok {
		file.Close()
		return f.FS.Lock(name)
	}
	deadline := time.Now().Add(f.wait)
	pause := time.Millisecond
	for {
		err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return fileLock{file}, nil
		case err == syscall.EINTR:
			continue
		case err != syscall.EWOULDBLOCK:
			file.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		case !time.Now().Before(deadline):
			file.Close()
			return nil, fmt.Errorf("%w (%s, waited %s)", errBusy, name, f.wait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

type fileLock struct{ f vfs.File }

func (l fileLock) Unlock() error {
	err := syscall.Flock(int(l.f.(fder).Fd()), syscall.LOCK_UN)
	return errors.Join(err, l.f.Close())
}
