package memory

import (
	"bytes"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// The tree: nodes, directory entries and path resolution.

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
	// treeGen counts the changes of any directory's present entries (every
	// entries.set and entries.del, and Crash); lookups remembers the last
	// few names lookup resolved while treeGen was gen, so a store's
	// repeated operations on the same few paths skip the walk from the root.
	treeGen uint64
	lookups lookupCache
}

// lookupCache is a few successful lookups, valid while the tree's entries
// have not changed since they were made (gen == FS.treeGen). A name's node
// depends only on the present entries along its path, so until one changes
// the walk would find the same node.
//
// It also remembers the last few names parent resolved — the name as given,
// its clean form, its directory's node and its last element — under the
// same rule: until an entry changes, the same name has the same directory.
// A store names the same few files (ledger, transcript, lock) on every
// operation, and cleaning a long path was most of each operation's cost.
type lookupCache struct {
	gen   uint64
	next  int
	names [4]string
	nodes [4]*node

	pnext  int
	pnames [4]string
	pclean [4]string
	pbases [4]string
	pdirs  [4]*node
	// plain: the clean form is itself clean (isClean), so walking its
	// elements as they are reaches the directory — what Lock needs to
	// know that no parent is missing.
	pplain [4]bool
}

// fresh empties c when the tree's entries changed since it was filled.
func (c *lookupCache) fresh(treeGen uint64) {
	if c.gen != treeGen {
		*c = lookupCache{gen: treeGen}
	}
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

// get finds name's node. A small directory (every one on a path the stores
// walk) is scanned: string equality rejects on length first, cheaper than
// a binary search's three-way compares; names are unique either way.
func (d dirents) get(name string) (*node, bool) {
	if len(d) <= 8 {
		for i := range d {
			if d[i].name == name {
				return d[i].n, true
			}
		}
		return nil, false
	}
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
	// One element at a time, jumping to each '/' with strings.IndexByte
	// rather than looking at every byte: every operation of the simulator's
	// filesystem starts here.
	for rest := name[1:]; ; {
		i := strings.IndexByte(rest, '/')
		elem := rest
		if i >= 0 {
			elem = rest[:i]
		}
		switch elem {
		case "", ".", "..":
			return false
		}
		if i < 0 {
			return true
		}
		rest = rest[i+1:]
	}
}

// next splits the first element off rest, a path that clean returned less
// its leading slash; the elements it yields are those of split.
func next(rest string) (elem, tail string) {
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i], rest[i+1:]
	}
	return rest, ""
}

func (m *FS) lookup(name string) (*node, error) {
	c := &m.lookups
	c.fresh(m.treeGen)
	for i := range c.nodes {
		if c.nodes[i] != nil && c.names[i] == name {
			return c.nodes[i], nil
		}
	}
	n, err := m.walk(name)
	if err == nil {
		c.names[c.next], c.nodes[c.next] = name, n
		c.next = (c.next + 1) % len(c.nodes)
	}
	return n, err
}

// walk resolves name from the root (lookup without its cache).
func (m *FS) walk(name string) (*node, error) {
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
	dir, _, base, err := m.parentClean(name)
	return dir, base, err
}

// parentClean is parent that also returns clean(name). Successful
// resolutions are remembered (see lookupCache).
func (m *FS) parentClean(name string) (dir *node, cleaned, base string, err error) {
	if i, ok := m.cachedParent(name); ok {
		pc := &m.lookups
		return pc.pdirs[i], pc.pclean[i], pc.pbases[i], nil
	}
	dir, cleaned, base, err = m.resolveParent(name)
	if err == nil {
		// resolveParent changed no entry, so the cache is still this
		// tree's.
		pc := &m.lookups
		i := pc.pnext
		pc.pnames[i], pc.pclean[i], pc.pbases[i], pc.pdirs[i] = name, cleaned, base, dir
		pc.pplain[i] = isClean(cleaned)
		pc.pnext = (i + 1) % len(pc.pdirs)
	}
	return dir, cleaned, base, err
}

// cachedParent finds name among the remembered parent resolutions.
func (m *FS) cachedParent(name string) (int, bool) {
	pc := &m.lookups
	pc.fresh(m.treeGen)
	for i := range pc.pdirs {
		if pc.pdirs[i] != nil && pc.pnames[i] == name {
			return i, true
		}
	}
	return 0, false
}

// baseOf is path.Base(clean(name)), from a remembered parent resolution
// when there is one.
func (m *FS) baseOf(name string) string {
	if i, ok := m.cachedParent(name); ok {
		return m.lookups.pbases[i]
	}
	return path.Base(clean(name))
}

// resolveParent is parentClean without the cache.
func (m *FS) resolveParent(name string) (*node, string, string, error) {
	c := clean(name)
	if c == "/" {
		return nil, c, "", syscall.EINVAL // the root has no parent entry
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
		return nil, c, "", err
	}
	if !dir.dir {
		return nil, c, "", syscall.ENOTDIR
	}
	return dir, c, c[i+1:], nil
}
