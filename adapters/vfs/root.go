package vfs

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrOutsideRoot: a path, or a symbolic link met on the way to it, leads out
// of every directory a Rooted FS was opened on.
var ErrOutsideRoot = errors.New("outside the directories tailproof was given")

// Rooted is the real filesystem confined to a set of directory trees: the
// roots the user named (Qwen's runtime directory, or the directory holding
// an explicitly named file). Every operation resolves its path inside one
// root with os.Root, which follows a symbolic link only while it stays
// inside that root — so a link planted below a root (chats -> /etc, or a
// ledger that is a link to another user's file) can neither be read through
// nor written through. A root itself may be a symbolic link: the user named
// it. Paths are OS paths, absolute or relative to the working directory, as
// for OS.
//
// The one operation allowed above a root is SyncDir of the root's
// ancestors: fsyncing a directory changes nothing in it, and a durable
// create needs every directory up to "/" synced (ADR 0004).
type Rooted struct {
	roots []root // longest path first, so a nested root wins
}

type root struct {
	path string // absolute and clean
	r    *os.Root
}

var _ FS = (*Rooted)(nil)

// Within opens a Rooted FS on the given directories, which must exist.
// Close releases their descriptors.
func Within(dirs ...string) (*Rooted, error) {
	fsys := &Rooted{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			fsys.Close()
			return nil, err
		}
		if slices.ContainsFunc(fsys.roots, func(r root) bool { return r.path == abs }) {
			continue
		}
		r, err := os.OpenRoot(abs)
		if err != nil {
			fsys.Close()
			return nil, err
		}
		fsys.roots = append(fsys.roots, root{abs, r})
	}
	slices.SortFunc(fsys.roots, func(a, b root) int { return cmp.Compare(len(b.path), len(a.path)) })
	return fsys, nil
}

// Roots lists the directories the FS is confined to.
func (f *Rooted) Roots() []string {
	out := make([]string, len(f.roots))
	for i, r := range f.roots {
		out[i] = r.path
	}
	return out
}

// Close releases the roots.
func (f *Rooted) Close() error {
	var errs []error
	for _, r := range f.roots {
		errs = append(errs, r.r.Close())
	}
	f.roots = nil
	return errors.Join(errs...)
}

// resolve finds the root holding name and name's path relative to it.
func (f *Rooted) resolve(op, name string) (root, string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return root{}, "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	for _, r := range f.roots {
		rel, err := filepath.Rel(r.path, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return r, rel, nil
		}
	}
	return root{}, "", &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%s)", ErrOutsideRoot, strings.Join(f.Roots(), ", "))}
}

// escaped turns os.Root's "path escapes from parent" into ErrOutsideRoot,
// naming the path the caller asked for and the root it left.
func escaped(err error, op, name string, r root) error {
	// os keeps the sentinel unexported; its text is the only handle.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: a symbolic link on the way leads out of %s", ErrOutsideRoot, r.path)}
		}
	}
	return err
}

func (f *Rooted) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	r, rel, err := f.resolve("open", name)
	if err != nil {
		return nil, err
	}
	file, err := r.r.OpenFile(rel, flag, perm)
	if err != nil {
		return nil, escaped(err, "open", name, r)
	}
	return file, nil
}

func (f *Rooted) Stat(name string) (fs.FileInfo, error) {
	r, rel, err := f.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	st, err := r.r.Stat(rel)
	return st, escaped(err, "stat", name, r)
}

// Lstat is Stat without following a final symbolic link.
func (f *Rooted) Lstat(name string) (fs.FileInfo, error) {
	r, rel, err := f.resolve("lstat", name)
	if err != nil {
		return nil, err
	}
	st, err := r.r.Lstat(rel)
	return st, escaped(err, "lstat", name, r)
}

// two resolves a pair of paths, which must lie in the same root.
func (f *Rooted) two(op, a, b string) (root, string, string, error) {
	ra, relA, err := f.resolve(op, a)
	if err != nil {
		return root{}, "", "", err
	}
	rb, relB, err := f.resolve(op, b)
	if err != nil {
		return root{}, "", "", err
	}
	if ra.path != rb.path {
		return root{}, "", "", &fs.PathError{Op: op, Path: b, Err: fmt.Errorf("%w: %s and %s lie in different roots", ErrOutsideRoot, a, b)}
	}
	return ra, relA, relB, nil
}

func (f *Rooted) Rename(oldpath, newpath string) error {
	r, a, b, err := f.two("rename", oldpath, newpath)
	if err != nil {
		return err
	}
	return escaped(r.r.Rename(a, b), "rename", newpath, r)
}

func (f *Rooted) Link(oldpath, newpath string) error {
	r, a, b, err := f.two("link", oldpath, newpath)
	if err != nil {
		return err
	}
	return escaped(r.r.Link(a, b), "link", newpath, r)
}

func (f *Rooted) Remove(name string) error {
	r, rel, err := f.resolve("remove", name)
	if err != nil {
		return err
	}
	return escaped(r.r.Remove(rel), "remove", name, r)
}

func (f *Rooted) MkdirAll(p string, perm fs.FileMode) error {
	r, rel, err := f.resolve("mkdir", p)
	if err != nil {
		return err
	}
	return escaped(r.r.MkdirAll(rel, perm), "mkdir", p, r)
}

// ReadDir lists a directory sorted by name, as os.ReadDir does.
func (f *Rooted) ReadDir(name string) ([]fs.DirEntry, error) {
	r, rel, err := f.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	d, err := r.r.Open(rel)
	if err != nil {
		return nil, escaped(err, "readdir", name, r)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

func (f *Rooted) SyncDir(name string) error {
	if f.aboveRoot(name) {
		return OS.SyncDir(name)
	}
	r, rel, err := f.resolve("syncdir", name)
	if err != nil {
		return err
	}
	d, err := r.r.Open(rel)
	if err != nil {
		return escaped(err, "syncdir", name, r)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isUnsupported(err) {
		return err
	}
	return nil
}

// aboveRoot reports whether name is a strict ancestor of some root.
func (f *Rooted) aboveRoot(name string) bool {
	abs, err := filepath.Abs(name)
	if err != nil {
		return false
	}
	for _, r := range f.roots {
		if rel, err := filepath.Rel(abs, r.path); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Lock is OS.Lock on a lock file inside a root.
func (f *Rooted) Lock(name string) (Unlocker, error) {
	if err := f.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	r, rel, err := f.resolve("lock", name)
	if err != nil {
		return nil, err
	}
	file, err := r.r.OpenFile(rel, os.O_RDWR|os.O_CREATE|nonblock, 0o600)
	if err != nil {
		return nil, escaped(err, "lock", name, r)
	}
	return lockFile(file)
}
