package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Op names a filesystem operation a Fault can target.
type Op string

// The operations the FS counts. Every call of the matching vfs method (or,
// for OpWrite/OpRead/OpSync/OpTruncate, of the File method) is one occurrence.
const (
	OpOpen     Op = "open"
	OpRead     Op = "read"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpTruncate Op = "truncate"
	OpStat     Op = "stat"
	OpRename   Op = "rename"
	OpLink     Op = "link"
	OpRemove   Op = "remove"
	OpMkdir    Op = "mkdir"
	OpReadDir  Op = "readdir"
	OpSyncDir  Op = "syncdir"
	OpLock     Op = "lock"
)

// ops lists the operations in the order of FS.counts.
var ops = [...]Op{OpOpen, OpRead, OpWrite, OpSync, OpTruncate, OpStat, OpRename, OpLink, OpRemove, OpMkdir, OpReadDir, OpSyncDir, OpLock}

// opIndex is op's index in ops, or -1: counting every operation through a
// map keyed by a string was a visible share of the simulator's time.
func opIndex(op Op) int {
	switch op {
	case OpOpen:
		return 0
	case OpRead:
		return 1
	case OpWrite:
		return 2
	case OpSync:
		return 3
	case OpTruncate:
		return 4
	case OpStat:
		return 5
	case OpRename:
		return 6
	case OpLink:
		return 7
	case OpRemove:
		return 8
	case OpMkdir:
		return 9
	case OpReadDir:
		return 10
	case OpSyncDir:
		return 11
	case OpLock:
		return 12
	}
	return -1
}

// ErrInjected is the I/O error a Fault returns unless it names its own. It
// wraps syscall.EIO so callers that classify errno see a real disk error.
var ErrInjected = fmt.Errorf("memory: injected I/O error: %w", syscall.EIO)

// ErrCrashed is returned by every operation after a Fault with Crash fired:
// the simulated process is dead until the test calls FS.Crash (the reboot).
var ErrCrashed = errors.New("memory: filesystem crashed")

// Fault arms one injected failure: the Nth occurrence (1-based, counted from
// Inject) of Op on a matching path fails. A write fault may first let Torn
// bytes of the write land (a torn write: they are in the page cache, not
// synced). With Crash set the simulated process dies at that point: the
// operation and every later one return ErrCrashed until FS.Crash.
type Fault struct {
	Op Op
	// Path restricts the fault to one file or directory (exact path after
	// filepath.Clean); empty matches every path.
	Path string
	// Nth is the occurrence that fails; 0 means the first.
	Nth int
	// Torn is, for OpWrite, how many bytes of the failing write land before
	// the failure. It is clamped to the write's length.
	Torn int
	// Crash halts the filesystem at this point instead of returning Err.
	Crash bool
	// Err is returned by the failing operation; nil means ErrInjected.
	Err error

	seen int
}

// FS is a strict in-memory vfs.FS modelled on pebble's strict MemFS: it keeps,
// per file, the bytes written and the bytes synced, and per directory, the
// entries present and the entries synced. Crash forgets everything that was
// not synced — a file whose directory entry was never synced disappears even
// if its bytes were — so a crash test proves an adapter's fsync discipline,
// not just its happy path. Nothing in it is random: torn prefixes are chosen
// by the test (or by a seeded *rand.Rand the test owns).
//
// The zero value is not usable; call NewFS.
type FS struct {
	mu     sync.Mutex
	cond   sync.Cond // L is &mu
	root   *node
	faults []*Fault
	halted bool
	gen    uint64            // bumped by Crash; handles and locks from an older gen are dead
	locks  map[string]uint64 // nil until the first Lock
	counts [len(ops)]int
	// walkMark numbers the walks over the tree (Clone, Crash), so that a
	// node's mark says whether the walk running now has visited it.
	walkMark uint64
}

type node struct {
	dir bool
	// shared says data's and synced's arrays may also be read through other
	// slices — each other's (after a crash), or another FS's (a Clone's, or
	// the one this is a Clone of) — so they are copied (own) before any write
	// inside their lengths. Writes past a length need no copy: a slice that
	// has room past its length is the only one that reaches there, because
	// Clone and Crash hand out slices whose capacity is their length.
	shared bool
	mode   fs.FileMode
	// files
	data   []byte
	synced []byte // aliases data only while shared
	// dirty is the lowest offset changed since the last sync (len(data) when
	// clean), so a sync copies only what changed and a crash can tell an
	// append (everything below len(synced) intact) from an overwrite.
	dirty int
	// directories
	entries       dirents
	syncedEntries dirents
	// mark and idx are scratch for walks over the tree: a node whose mark is
	// the FS's current walkMark has been visited, and idx is its place in
	// the Clone being made.
	mark uint64
	idx  int
}

// dirent is one name in a directory.
type dirent struct {
	name string
	n    *node
}

// dirents is a directory's entries sorted by name. Directories here hold a
// handful of names: a sorted slice is looked up as fast as a map, needs no
// sort for ReadDir or Crash, and SyncDir, Crash and Clone copy it whole
// where a map has to be rebuilt entry by entry.
type dirents []dirent

func (d dirents) find(name string) (int, bool) {
	return slices.BinarySearchFunc(d, name, func(e dirent, name string) int { return strings.Compare(e.name, name) })
}

func (d dirents) get(name string) (*node, bool) {
	if i, ok := d.find(name); ok {
		return d[i].n, true
	}
	return nil, false
}

func (d *dirents) set(name string, n *node) {
	i, ok := d.find(name)
	if ok {
		(*d)[i].n = n
		return
	}
	*d = slices.Insert(*d, i, dirent{name, n})
}

func (d *dirents) del(name string) {
	if i, ok := d.find(name); ok {
		*d = slices.Delete(*d, i, i+1)
	}
}

// own gives n private copies of its byte arrays before a write inside them.
func (n *node) own() {
	if n.shared {
		n.data = bytes.Clone(n.data)
		n.synced = bytes.Clone(n.synced)
		n.shared = false
	}
}

func newDir(mode fs.FileMode) *node {
	return &node{dir: true, mode: fs.ModeDir | mode.Perm()}
}

// NewFS returns an empty filesystem whose root directory "/" exists durably.
func NewFS() *FS {
	m := &FS{root: newDir(0o755)}
	m.cond.L = &m.mu
	return m
}

var _ vfs.FS = (*FS)(nil)

// Inject arms a fault. Faults are independent; each fires at most once.
func (m *FS) Inject(f Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f.Nth <= 0 {
		f.Nth = 1
	}
	f.seen = 0
	m.faults = append(m.faults, &f)
}

// ClearFaults disarms every fault that has not fired.
func (m *FS) ClearFaults() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = nil
}

// Count reports how many times op has been performed (including failed and
// faulted attempts). Tests use it to enumerate crash points: run once to
// count, then crash at each occurrence in turn.
func (m *FS) Count(op Op) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := opIndex(op); i >= 0 {
		return m.counts[i]
	}
	return 0
}

// Halted reports whether a crash fault has fired and the FS awaits Crash.
func (m *FS) Halted() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.halted
}

// Crash simulates power loss and reboot: every file reverts to its synced
// bytes, every directory to its synced entries, open files and locks die, and
// a halted filesystem runs again. Armed faults stay armed.
func (m *FS) Crash() { m.CrashKeeping(nil) }

// CrashKeeping is Crash, except that keep may let a prefix of each file's
// unsynced appended bytes survive — what a disk that wrote some sectors
// before losing power leaves behind. keep is called, in path order, for every
// surviving file that has bytes appended beyond its synced prefix, with the
// file's path and those bytes; it returns how many to keep (clamped to
// [0, len(unsynced)]). Unsynced overwrites and truncations are always lost.
func (m *FS) CrashKeeping(keep func(name string, unsynced []byte) int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.walkMark++
	mark := m.walkMark
	var walk func(dir *node, p string)
	walk = func(dir *node, p string) {
		dir.entries = slices.Clone(dir.syncedEntries)
		for _, e := range dir.entries {
			n := e.n
			if n.mark == mark {
				continue
			}
			n.mark = mark
			if n.dir {
				sub := "" // paths are only for keep
				if keep != nil {
					sub = join(p, e.name)
				}
				walk(n, sub)
				continue
			}
			ls := len(n.synced)
			k := 0
			if keep != nil && len(n.data) > ls && n.dirty >= ls {
				extra := n.data[ls:]
				k = min(max(keep(join(p, e.name), bytes.Clone(extra)), 0), len(extra))
			}
			// What survives is the synced bytes and the kept prefix of the
			// appended ones. An unsynced truncation can leave data shorter
			// than synced; k is then 0 and only the synced bytes survive.
			// With k > 0 dirty is at or past len(synced), so data begins with
			// the synced bytes: either way the survivor is a prefix of an
			// array the node has, and data and synced both become it, shared
			// rather than copied.
			kept := n.synced[:ls:ls]
			if k > 0 {
				kept = n.data[: ls+k : ls+k]
			}
			n.data, n.synced = kept, kept
			n.dirty = len(kept)
			n.shared = true
		}
	}
	m.root.mark = mark
	walk(m.root, "/")
	m.halted = false
	m.gen++
	m.locks = nil
	m.cond.Broadcast()
}

// Clone returns an independent copy of the filesystem as it is now: every
// directory and file, each file's synced and unsynced bytes, each directory's
// present and synced entries, and permissions, so that a crash of the copy
// leaves what a crash of m would have. Names that share a node in m (hard
// links, and an entry that is present under one name and durable under
// another after a rename) share one node in the copy. Nothing else carries
// over: the copy has no open files, holds no locks, has no faults armed and
// has counted no operations. A halted m gives a halted copy: its process died
// at the crash point, so the copy's page cache may only be crashed, and every
// operation on it returns ErrCrashed until its Crash. Writes, syncs, renames
// and crashes on either never show on the other.
//
// The copy is cheap: file bytes are shared until one side writes inside them.
func (m *FS) Clone() *FS {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.walkMark++
	mark := m.walkMark
	// Number the nodes reachable from the root through present or synced
	// entries, each once however many names it has, and count the entries.
	var buf [32]*node
	order := append(buf[:0], m.root)
	m.root.mark, m.root.idx = mark, 0
	nents := 0
	for i := 0; i < len(order); i++ {
		n := order[i]
		nents += len(n.entries) + len(n.syncedEntries)
		for _, es := range [2]dirents{n.entries, n.syncedEntries} {
			for _, e := range es {
				if e.n.mark != mark {
					e.n.mark, e.n.idx = mark, len(order)
					order = append(order, e.n)
				}
			}
		}
	}
	slab := make([]node, len(order))
	ents := make(dirents, nents)
	// carve hands out the next len(d) entries of ents remapped to the
	// clone's nodes, with no room to append into its neighbour's.
	carve := func(d dirents) dirents {
		if len(d) == 0 {
			return nil
		}
		out := ents[:len(d):len(d)]
		ents = ents[len(d):]
		for i, e := range d {
			out[i] = dirent{e.name, &slab[e.n.idx]}
		}
		return out
	}
	for i, n := range order {
		c := &slab[i]
		c.dir, c.mode = n.dir, n.mode
		if n.dir {
			c.entries, c.syncedEntries = carve(n.entries), carve(n.syncedEntries)
			continue
		}
		// Each side's slice ends at its capacity or is the one it had, and
		// both are marked shared: see node.shared.
		c.data = n.data[:len(n.data):len(n.data)]
		c.synced = n.synced[:len(n.synced):len(n.synced)]
		c.dirty = n.dirty
		c.shared = true
		n.shared = true
	}
	c := &FS{root: &slab[0], halted: m.halted}
	c.cond.L = &c.mu
	return c
}

// join is path.Join(dir, name) for a dir that Join returned and one entry's
// name, without Join's cleaning pass when there is nothing to clean.
func join(dir, name string) string {
	switch {
	case name == "" || name == "." || name == "..":
		return path.Join(dir, name)
	case dir == "/":
		return "/" + name
	}
	return dir + "/" + name
}

// KeepRandom returns a keep function for CrashKeeping that keeps a prefix of
// uniformly random length, drawn from r (which the test seeds).
func KeepRandom(r *rand.Rand) func(string, []byte) int {
	return func(_ string, unsynced []byte) int { return r.IntN(len(unsynced) + 1) }
}

// ReadFile returns a file's current (page cache) contents.
func (m *FS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if n.dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return bytes.Clone(n.data), nil
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
	}
	dir.syncedEntries.set(last, n)
	n.data = bytes.Clone(data)
	n.synced = bytes.Clone(data)
	n.dirty = len(data)
	n.shared = false
	return nil
}

// --- internals ---

// split turns an OS path into components below the root. Relative paths are
// taken relative to the root: the memory FS has no working directory.
func split(name string) []string {
	c := filepath.ToSlash(filepath.Clean(name))
	c = strings.TrimLeft(c, "/")
	if c == "" || c == "." {
		return nil
	}
	return strings.Split(c, "/")
}

// clean is "/" joined with split(name). It is on every operation's path, so a
// name that is already in that form (what filepath.Join gives the adapters)
// is returned as it is, without allocating.
func clean(name string) string {
	if isClean(name) {
		return name
	}
	return "/" + strings.Join(split(name), "/")
}

// isClean reports whether clean(name) == name: rooted, no trailing slash, and
// no empty, "." or ".." element. Only where '/' is the separator: elsewhere
// filepath.Clean also rewrites separators.
func isClean(name string) bool {
	if filepath.Separator != '/' || len(name) == 0 || name[0] != '/' {
		return false
	}
	if len(name) == 1 {
		return true
	}
	start := 1
	for i := 1; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		switch name[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// next splits the first element off rest, a path that clean returned less
// its leading slash; the elements it yields are those of split.
func next(rest string) (elem, tail string) {
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i], rest[i+1:]
	}
	return rest, ""
}

// check counts one occurrence of op on p and reports the fault that fires on
// it, if any. Callers hold m.mu.
func (m *FS) check(op Op, p string) (*Fault, error) {
	if i := opIndex(op); i >= 0 {
		m.counts[i]++
	}
	if m.halted {
		return nil, ErrCrashed
	}
	cp, cleaned := "", false
	for i, f := range m.faults {
		if f.Op != op {
			continue
		}
		if f.Path != "" {
			if !cleaned {
				cp, cleaned = clean(p), true
			}
			if clean(f.Path) != cp {
				continue
			}
		}
		f.seen++
		if f.seen < f.Nth {
			continue
		}
		m.faults = slices.Delete(m.faults, i, i+1)
		if f.Crash {
			m.halted = true
			m.cond.Broadcast()
		}
		return f, nil
	}
	return nil, nil
}

func (f *Fault) err() error {
	if f.Crash {
		return ErrCrashed
	}
	if f.Err != nil {
		return f.Err
	}
	return ErrInjected
}

// gate is check for operations that either fail whole or proceed.
func (m *FS) gate(op Op, p string) error {
	f, err := m.check(op, p)
	if err != nil {
		return err
	}
	if f != nil {
		return f.err()
	}
	return nil
}

func (m *FS) lookup(name string) (*node, error) {
	n := m.root
	for rest := clean(name)[1:]; rest != ""; {
		var p string
		p, rest = next(rest)
		if !n.dir {
			return nil, syscall.ENOTDIR
		}
		c, ok := n.entries.get(p)
		if !ok {
			return nil, fs.ErrNotExist
		}
		n = c
	}
	return n, nil
}

// parent resolves the directory holding name and name's last component.
func (m *FS) parent(name string) (*node, string, error) {
	c := clean(name)
	if c == "/" {
		return nil, "", syscall.EINVAL // the root has no parent entry
	}
	// The directory is looked up by its own path, cleaned again: a relative
	// name's leading ".." elements resolve to the root there, as they always
	// have.
	i := strings.LastIndexByte(c, '/')
	dirPath := c[:i]
	if i == 0 {
		dirPath = "/"
	}
	dir, err := m.lookup(dirPath)
	if err != nil {
		return nil, "", err
	}
	if !dir.dir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, c[i+1:], nil
}

// --- vfs.FS ---

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
	}
	acc := flag & (syscall.O_RDONLY | syscall.O_WRONLY | syscall.O_RDWR)
	if flag&syscall.O_TRUNC != 0 && acc != syscall.O_RDONLY {
		n.data = n.data[:0:0]
		n.dirty = 0
	}
	return &file{fs: m, n: n, name: name, gen: m.gen,
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
	return info{name: path.Base(clean(name)), n: n, size: int64(len(n.data))}, nil
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
	nd.entries.set(nb, n)
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
	n.syncedEntries = slices.Clone(n.entries)
	return nil
}

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
	// Like vfs.OS, create missing parent directories (0700, not durable).
	key := clean(name)
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
		} else if !n.dir {
			return nil, pe(syscall.ENOTDIR)
		}
		d = n
	}
	dir, base, err := m.parent(name)
	if err != nil {
		return nil, pe(err)
	}
	if n, ok := dir.entries.get(base); !ok {
		dir.entries.set(base, &node{mode: 0o600})
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

// --- files ---

type file struct {
	fs     *FS
	n      *node
	name   string
	gen    uint64
	pos    int64
	read   bool
	write  bool
	append bool
	closed bool
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
	return info{name: path.Base(clean(f.name)), n: f.n, size: int64(len(f.n.data))}, nil
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
