package memory

import (
	"bytes"
	"io"
	"io/fs"
	"syscall"
	"time"
)

// Open files.

type file struct {
	fs     *FS
	n      *node
	name   string
	base   string // path.Base(clean(name)), from OpenFile's resolution
	gen    uint64
	pos    int64
	read   bool
	write  bool
	append bool
	closed bool
	// st is the first Stat's answer, handed out as &st: it shares the
	// handle's allocation (the stores stat every file they open, once), and
	// it is never written again, so it stays that Stat's snapshot.
	st      info
	statted bool
}

// live reports why the handle cannot be used; callers hold fs.mu.
func (f *file) live() error {
	switch {
	case f.closed:
		return fs.ErrClosed
	case f.fs.gen != f.gen:
		return ErrCrashed // opened before the crash: the process that held it is gone
	}
	return nil
}

func (f *file) pe(op string, err error) error { return &fs.PathError{Op: op, Path: f.name, Err: err} }

func (f *file) Name() string { return f.name }

func (f *file) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	n, err := f.readAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off < 0 {
		return 0, f.pe("readat", syscall.EINVAL)
	}
	n, err := f.readAt(p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func (f *file) readAt(p []byte, off int64) (int, error) {
	if err := f.live(); err != nil {
		return 0, f.pe("read", err)
	}
	if !f.read {
		return 0, f.pe("read", syscall.EBADF)
	}
	if err := f.fs.gate(OpRead, f.name); err != nil {
		return 0, f.pe("read", err)
	}
	if off >= int64(len(f.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	return copy(p, f.n.data[off:]), nil
}

func (f *file) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.live(); err != nil {
		return 0, f.pe("write", err)
	}
	if !f.write {
		return 0, f.pe("write", syscall.EBADF)
	}
	fault, err := f.fs.check(OpWrite, f.name)
	if err != nil {
		return 0, f.pe("write", err)
	}
	land := p
	if fault != nil {
		land = p[:min(max(fault.Torn, 0), len(p))]
	}
	if f.append {
		f.pos = int64(len(f.n.data))
	}
	f.n.dirty = min(f.n.dirty, int(f.pos))
	end := f.pos + int64(len(land))
	switch {
	case f.pos == int64(len(f.n.data)):
		// The common append: no zero fill to overwrite.
		f.n.data = append(f.n.data, land...)
	default:
		if f.pos < int64(len(f.n.data)) {
			f.n.own()
		}
		if end > int64(len(f.n.data)) {
			f.n.data = append(f.n.data, make([]byte, end-int64(len(f.n.data)))...)
		}
		copy(f.n.data[f.pos:end], land)
	}
	f.pos = end
	if fault != nil {
		return len(land), f.pe("write", fault.err())
	}
	return len(p), nil
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.live(); err != nil {
		return 0, f.pe("seek", err)
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.pos
	case io.SeekEnd:
		base = int64(len(f.n.data))
	default:
		return 0, f.pe("seek", syscall.EINVAL)
	}
	if base+offset < 0 {
		return 0, f.pe("seek", syscall.EINVAL)
	}
	f.pos = base + offset
	return f.pos, nil
}

func (f *file) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.pe("close", fs.ErrClosed)
	}
	f.closed = true
	return nil
}

func (f *file) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.live(); err != nil {
		return nil, f.pe("stat", err)
	}
	if err := f.fs.gate(OpStat, f.name); err != nil {
		return nil, f.pe("stat", err)
	}
	st := info{name: f.base, n: f.n, size: int64(len(f.n.data))}
	if !f.statted {
		f.st, f.statted = st, true
		return &f.st, nil
	}
	return st, nil
}

// Sync makes the file's current bytes durable (not its directory entry).
func (f *file) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.live(); err != nil {
		return f.pe("sync", err)
	}
	if err := f.fs.gate(OpSync, f.name); err != nil {
		return f.pe("sync", err)
	}
	k := min(f.n.dirty, len(f.n.synced))
	if k < len(f.n.synced) {
		f.n.own() // the append below rewrites synced from k on
	}
	f.n.synced = append(f.n.synced[:k], f.n.data[k:]...)
	f.n.dirty = len(f.n.data)
	return nil
}

func (f *file) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.live(); err != nil {
		return f.pe("truncate", err)
	}
	if !f.write {
		return f.pe("truncate", syscall.EINVAL)
	}
	if size < 0 {
		return f.pe("truncate", syscall.EINVAL)
	}
	if err := f.fs.gate(OpTruncate, f.name); err != nil {
		return f.pe("truncate", err)
	}
	f.n.dirty = min(f.n.dirty, int(size))
	if size <= int64(len(f.n.data)) {
		f.n.data = bytes.Clone(f.n.data[:size])
	} else {
		f.n.data = append(f.n.data, make([]byte, size-int64(len(f.n.data)))...)
	}
	return nil
}

type info struct {
	name string
	n    *node
	size int64
}

func (i info) Name() string { return i.name }
func (i info) Size() int64 {
	if i.n.dir {
		return 0
	}
	return i.size
}
func (i info) Mode() fs.FileMode { return i.n.mode }

// ModTime is always the zero time: the memory FS keeps no clock so that runs
// are reproducible.
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.n.dir }
func (i info) Sys() any           { return nil }
