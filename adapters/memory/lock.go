package memory

import (
	"io/fs"
	"strings"
	"sync"
	"syscall"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Lock: the advisory lock of vfs.FS.

// Lock is an in-process exclusive lock keyed by path. Like the OS
// implementation it creates the lock file and its parent directories;
// unlike flock it is released by Crash (the process holding it died).
func (m *FS) Lock(name string) (vfs.Unlocker, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := func(err error) error { return &fs.PathError{Op: "lock", Path: name, Err: err} }
	if err := m.gate(OpLock, name); err != nil {
		return nil, pe(err)
	}
	var (
		dir       *node
		key, base string
	)
	if i, ok := m.cachedParent(name); ok && m.lookups.pplain[i] {
		// Resolved before, on this very tree, along the elements the loop
		// below walks: every parent exists and is a directory.
		dir, key, base = m.lookups.pdirs[i], m.lookups.pclean[i], m.lookups.pbases[i]
	} else {
		// Like vfs.OS, create missing parent directories (0700, not durable).
		key = clean(name)
		d := m.root
		var rest string // the elements of name but its last
		if i := strings.LastIndexByte(key, '/'); i > 0 {
			rest = key[1:i]
		}
		for rest != "" {
			var c string
			c, rest = next(rest)
			n, ok := d.entries.get(c)
			if !ok {
				n = newDir(0o700)
				d.entries.set(c, n)
				m.treeGen++
			} else if !n.dir {
				return nil, pe(syscall.ENOTDIR)
			}
			d = n
		}
		var err error
		if dir, base, err = m.parent(name); err != nil {
			return nil, pe(err)
		}
	}
	if n, ok := dir.entries.get(base); !ok {
		dir.entries.set(base, &node{mode: 0o600})
		m.treeGen++
	} else if n.dir {
		return nil, pe(syscall.EISDIR)
	}
	gen := m.gen
	for {
		if m.halted || m.gen != gen {
			return nil, pe(ErrCrashed)
		}
		if _, held := m.locks[key]; !held {
			break
		}
		m.cond.Wait()
	}
	if m.locks == nil {
		m.locks = map[string]uint64{}
	}
	m.locks[key] = gen
	return &lock{fs: m, key: key, gen: gen}, nil
}

type lock struct {
	fs   *FS
	key  string
	gen  uint64
	once sync.Once
}

func (l *lock) Unlock() error {
	err := fs.ErrClosed
	l.once.Do(func() {
		err = nil
		l.fs.mu.Lock()
		defer l.fs.mu.Unlock()
		if g, ok := l.fs.locks[l.key]; ok && g == l.gen && l.fs.gen == l.gen {
			delete(l.fs.locks, l.key)
			l.fs.cond.Broadcast()
		}
	})
	return err
}
