package memory

import (
	"bytes"
	"math/rand/v2"
	"slices"
)

// Crashes and clones: what survives a crash (durable bytes, or a chosen
// prefix of the unsynced ones), and copies for branching.

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
	m.treeGen++ // every directory's present entries become its synced ones
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
	// The copy's tree is m's, so m's remembered lookups and parent
	// resolutions hold there too, on the copy's nodes (every node one found
	// is reachable, so numbered).
	c.lookups.gen = c.treeGen
	if m.lookups.gen == m.treeGen {
		for i, n := range m.lookups.nodes {
			if n != nil && n.mark == mark {
				c.lookups.names[i], c.lookups.nodes[i] = m.lookups.names[i], &slab[n.idx]
			}
		}
		c.lookups.next = m.lookups.next
		ml, cl := &m.lookups, &c.lookups
		for i, d := range ml.pdirs {
			if d != nil && d.mark == mark {
				cl.pnames[i], cl.pclean[i], cl.pbases[i], cl.pplain[i] = ml.pnames[i], ml.pclean[i], ml.pbases[i], ml.pplain[i]
				cl.pdirs[i] = &slab[d.idx]
			}
		}
		cl.pnext = ml.pnext
	}
	return c
}

// KeepRandom returns a keep function for CrashKeeping that keeps a prefix of
// uniformly random length, drawn from r (which the test seeds).
func KeepRandom(r *rand.Rand) func(string, []byte) int {
	return func(_ string, unsynced []byte) int { return r.IntN(len(unsynced) + 1) }
}
