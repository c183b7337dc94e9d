package memory

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// The vfs.FS methods, and whole-file helpers for tests.

// ReadFile returns a file's current (page cache) contents.
func (m *FS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.regular(name)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(n.data), nil
}

// ReadFileShared is ReadFile without the copy, for a caller that reads a
// file many times and never writes the bytes it gets (the simulator reads
// each crash point's ledger and transcript several times). The slice is the
// file's own array, capped at its length and marked shared (see
// node.shared), so no later write, sync, truncate or crash shows in it: a
// write inside it copies the array first, an append lands past its cap. The
// caller must not modify it.
func (m *FS) ReadFileShared(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.regular(name)
	if err != nil {
		return nil, err
	}
	n.shared = true
	return n.data[:len(n.data):len(n.data)], nil
}

// regular looks up the file name for a read; m.mu is held.
func (m *FS) regular(name string) (*node, error) {
	n, err := m.lookup(name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if n.dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return n, nil
}

// DurableFile returns what a crash right now would leave of the file (without
// torn prefixes): its synced bytes if its path is durably linked, else
// fs.ErrNotExist.
func (m *FS) DurableFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir := m.root
	for rest := clean(name)[1:]; rest != ""; {
		var p string
		p, rest = next(rest)
		n, ok := dir.syncedEntries.get(p)
		if !ok {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
		}
		if rest == "" {
			if n.dir {
				return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
			}
			return bytes.Clone(n.synced), nil
		}
		if !n.dir {
			return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.ENOTDIR}
		}
		dir = n
	}
	return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
}

// WriteFile creates or replaces name with data, durably (bytes and directory
// entries synced, parents created): a fixture helper for tests, not a path
// the adapters use.
func (m *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := m.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := split(name)
	if len(parts) == 0 {
		return &fs.PathError{Op: "write", Path: name, Err: syscall.EISDIR}
	}
	// Make every ancestor durable too, so the fixture survives any Crash.
	dir := m.root
	for _, p := range parts[:len(parts)-1] {
		child, _ := dir.entries.get(p)
		dir.syncedEntries.set(p, child)
		dir = child
	}
	last := parts[len(parts)-1]
	n, ok := dir.entries.get(last)
	if ok && n.dir {
		return &fs.PathError{Op: "write", Path: name, Err: syscall.EISDIR}
	}
	if !ok {
		n = &node{mode: perm.Perm()}
		dir.entries.set(last, n)
		m.treeGen++
	}
	dir.syncedEntries.set(last, n)
	n.data = bytes.Clone(data)
	n.synced = bytes.Clone(data)
	n.dirty = len(data)
	n.shared = false
	return nil
}

// OpenFile supports O_RDONLY, O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_TRUNC and
// O_APPEND. Directories cannot be opened (use ReadDir and SyncDir).
func (m *FS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := func(err error) error { return &fs.PathError{Op: "open", Path: name, Err: err} }
	if err := m.gate(OpOpen, name); err != nil {
		return nil, pe(err)
	}
	dir, base, err := m.parent(name)
	if err != nil {
		return nil, pe(err)
	}
	n, ok := dir.entries.get(base)
	switch {
	case ok && flag&(syscall.O_CREAT|syscall.O_EXCL) == syscall.O_CREAT|syscall.O_EXCL:
		return nil, pe(fs.ErrExist)
	case ok && n.dir:
		return nil, pe(syscall.EISDIR)
	case !ok && flag&syscall.O_CREAT == 0:
		return nil, pe(fs.ErrNotExist)
	case !ok:
		n = &node{mode: perm.Perm()}
		dir.entries.set(base, n)
		m.treeGen++
	}
	acc := flag & (syscall.O_RDONLY | syscall.O_WRONLY | syscall.O_RDWR)
	if flag&syscall.O_TRUNC != 0 && acc != syscall.O_RDONLY {
		n.data = n.data[:0:0]
		n.dirty = 0
	}
	return &file{fs: m, n: n, name: name, base: base, gen: m.gen,
		read:   acc == syscall.O_RDONLY || acc == syscall.O_RDWR,
		write:  acc == syscall.O_WRONLY || acc == syscall.O_RDWR,
		append: flag&syscall.O_APPEND != 0,
	}, nil
}

func (m *FS) Stat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(OpStat, name); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	n, err := m.lookup(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return info{name: m.baseOf(name), n: n, size: int64(len(n.data))}, nil
}

// Rename moves an entry, replacing a file at newpath, with os.Rename's
// rules (an existing directory is never replaced). Neither directory's change is durable until SyncDir.
func (m *FS) Rename(oldpath, newpath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	le := func(err error) error { return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err} }
	if err := m.gate(OpRename, oldpath); err != nil {
		return le(err)
	}
	// rename(2) resolves both parent directories before it looks the
	// source up, so a bad target directory wins over a missing source.
	od, ob, err := m.parent(oldpath)
	if err != nil {
		return le(err)
	}
	nd, nb, err := m.parent(newpath)
	if err != nil {
		return le(err)
	}
	t, exists := nd.entries.get(nb)
	n, ok := od.entries.get(ob)
	if !ok {
		return le(fs.ErrNotExist)
	}
	if exists && t.dir {
		// vfs.OS is os.Rename, which refuses any existing directory as the
		// target (even the source itself) with EEXIST.
		return le(fs.ErrExist)
	}
	if exists && t == n {
		return nil // same path, or two links to one file: rename(2) does nothing
	}
	if n.dir && strings.HasPrefix(clean(newpath)+"/", clean(oldpath)+"/") {
		return le(syscall.EINVAL)
	}
	if exists && n.dir {
		return le(syscall.ENOTDIR)
	}
	od.entries.del(ob)
	m.treeGen++
	nd.entries.set(nb, n)
	m.treeGen++
	return nil
}

func (m *FS) Link(oldpath, newpath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	le := func(err error) error { return &os.LinkError{Op: "link", Old: oldpath, New: newpath, Err: err} }
	if err := m.gate(OpLink, newpath); err != nil {
		return le(err)
	}
	n, err := m.lookup(oldpath)
	if err != nil {
		return le(err)
	}
	nd, nb, err := m.parent(newpath)
	if err != nil {
		return le(err)
	}
	if _, ok := nd.entries.get(nb); ok {
		return le(fs.ErrExist) // link(2) reports EEXIST before refusing a directory
	}
	if n.dir {
		return le(syscall.EPERM)
	}
	nd.entries.set(nb, n)
	m.treeGen++
	return nil
}

func (m *FS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := func(err error) error { return &fs.PathError{Op: "remove", Path: name, Err: err} }
	if err := m.gate(OpRemove, name); err != nil {
		return pe(err)
	}
	dir, base, err := m.parent(name)
	if err != nil {
		return pe(err)
	}
	n, ok := dir.entries.get(base)
	if !ok {
		return pe(fs.ErrNotExist)
	}
	if n.dir && len(n.entries) > 0 {
		return pe(syscall.ENOTEMPTY)
	}
	dir.entries.del(base)
	m.treeGen++
	return nil
}

// MkdirAll creates the missing directories. Like mkdir(2), a new directory's
// entry in its parent is not durable until the parent is synced.
func (m *FS) MkdirAll(p string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := func(err error) error { return &fs.PathError{Op: "mkdir", Path: p, Err: err} }
	if err := m.gate(OpMkdir, p); err != nil {
		return pe(err)
	}
	dir := m.root
	for rest := clean(p)[1:]; rest != ""; {
		var c string
		c, rest = next(rest)
		n, ok := dir.entries.get(c)
		if !ok {
			n = newDir(perm)
			dir.entries.set(c, n)
			m.treeGen++
		} else if !n.dir {
			return pe(syscall.ENOTDIR)
		}
		dir = n
	}
	return nil
}

func (m *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := func(err error) error { return &fs.PathError{Op: "readdirent", Path: name, Err: err} }
	if err := m.gate(OpReadDir, name); err != nil {
		return nil, pe(err)
	}
	n, err := m.lookup(name)
	if err != nil {
		return nil, pe(err)
	}
	if !n.dir {
		return nil, pe(syscall.ENOTDIR)
	}
	out := make([]fs.DirEntry, 0, len(n.entries))
	for _, e := range n.entries {
		out = append(out, fs.FileInfoToDirEntry(info{name: e.name, n: e.n, size: int64(len(e.n.data))}))
	}
	return out, nil
}

func (m *FS) SyncDir(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := func(err error) error { return &fs.PathError{Op: "sync", Path: name, Err: err} }
	if err := m.gate(OpSyncDir, name); err != nil {
		return pe(err)
	}
	n, err := m.lookup(name)
	if err != nil {
		return pe(err)
	}
	if !n.dir {
		return pe(syscall.ENOTDIR)
	}
	if !sameEntries(n.syncedEntries, n.entries) {
		n.syncedEntries = slices.Clone(n.entries)
	}
	return nil
}

// sameEntries reports whether a and b list the same names for the same
// nodes: a SyncDir that changes nothing keeps the synced array it has (the
// stores sync their directory chain after every append) rather than copy
// an equal one. The two are never one array either way.
func sameEntries(a, b dirents) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
