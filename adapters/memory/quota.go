package memory

import (
	"io"
	"io/fs"
	"sync"
	"syscall"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Quota is an FS with a fixed amount of free space: a write that needs more
// bytes than are free lands the prefix that fits and fails with ENOSPC —
// the short write of a full disk — and so does every later write until
// space is given back, by truncating a file or by SetFree. It is how a test
// fills the disk under an append at every byte, where a one-shot Fault would
// let the next write succeed.
//
// Space is counted by writes and truncations only: removing or renaming a
// file and crashing give nothing back. Everything else (faults, crashes,
// operation counts, the files themselves) is the embedded FS's.
type Quota struct {
	*FS
	mu   sync.Mutex
	free int64
}

var _ vfs.FS = (*Quota)(nil)

// NewQuota puts free bytes of space on top of m.
func NewQuota(m *FS, free int64) *Quota { return &Quota{FS: m, free: free} }

// SetFree sets the free space left.
func (q *Quota) SetFree(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free = n
}

// Free is the free space left.
func (q *Quota) Free() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.free
}

// take grants up to want bytes of new space and returns how many.
func (q *Quota) take(want int64) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	got := min(max(want, 0), q.free)
	q.free -= got
	return got
}

func (q *Quota) give(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free += n
}

// OpenFile opens through the embedded FS; the file's writes are metered.
func (q *Quota) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := q.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &quotaFile{File: f, q: q, append: flag&syscall.O_APPEND != 0}, nil
}

type quotaFile struct {
	vfs.File
	q      *Quota
	append bool
}

// growth is how many bytes a write of n at the current position adds to
// the file.
func (f *quotaFile) growth(n int) (int64, error) {
	st, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	if f.append {
		return int64(n), nil
	}
	pos, err := f.File.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	return max(pos+int64(n)-st.Size(), 0), nil
}

func (f *quotaFile) Write(p []byte) (int, error) {
	grow, err := f.growth(len(p))
	if err != nil {
		return 0, err
	}
	got := f.q.take(grow)
	// The write's first len(p)-grow bytes overwrite; the rest are new, and
	// only got of those fit.
	fits := len(p) - int(grow-got)
	n, err := f.File.Write(p[:fits])
	f.q.give(got - max(int64(n)-(int64(len(p))-grow), 0)) // what a failed write did not use
	if err == nil && fits < len(p) {
		err = &fs.PathError{Op: "write", Path: f.File.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

func (f *quotaFile) Truncate(size int64) error {
	st, err := f.File.Stat()
	if err != nil {
		return err
	}
	old := st.Size()
	if size > old {
		if got := f.q.take(size - old); got < size-old {
			f.q.give(got)
			return &fs.PathError{Op: "truncate", Path: f.File.Name(), Err: syscall.ENOSPC}
		}
	}
	if err := f.File.Truncate(size); err != nil {
		if size > old {
			f.q.give(size - old)
		}
		return err
	}
	if size < old {
		f.q.give(old - size)
	}
	return nil
}
