package memory

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The lookup cache never answers other than a walk from the root: after
// any sequence of operations that change, or do not change, the tree —
// creates, writes, renames, links, removes, mkdirs, locks, syncs, crashes
// with or without kept bytes, clones — every name, clean or not, resolves to the
// same node (or fails the same way) with the cache as without it.
func TestLookupCacheMatchesWalk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := NewFS()
		// twin runs every operation too, its caches emptied before each one,
		// so the trees the two are left with show the cached answers
		// (Lock's skipped parent creation among them) change nothing.
		twin := NewFS()
		names := []string{"/a", "/b", "/d", "/d/a", "/d/b", "/d/e", "/d/e/f", "d/a", "/d/./b", "/d/../a", "/d/e/", "/x/y", "../d/a", "/../x/y", "/"}
		name := func(label string) string { return rapid.SampledFrom(names).Draw(t, label) }
		sameErr := func(a, b error) bool {
			return errors.Is(a, b) || a != nil && b != nil && a.Error() == b.Error()
		}
		check := func() {
			for _, n := range names {
				got, gotErr := m.lookup(n)
				want, wantErr := m.walk(n)
				if got != want || !sameErr(gotErr, wantErr) {
					t.Fatalf("lookup(%q) = %p, %v; a walk from the root gives %p, %v", n, got, gotErr, want, wantErr)
				}
				gd, gc, gb, gerr := m.parentClean(n)
				wd, wc, wb, werr := m.resolveParent(n)
				if gd != wd || gc != wc || gb != wb || !sameErr(gerr, werr) {
					t.Fatalf("parentClean(%q) = %p %q %q %v; resolved afresh %p %q %q %v", n, gd, gc, gb, gerr, wd, wc, wb, werr)
				}
				if got, want := m.baseOf(n), path.Base(clean(n)); got != want {
					t.Fatalf("baseOf(%q) = %q, path.Base(clean) %q", n, got, want)
				}
			}
			if got, want := dumpTree(m), dumpTree(twin); got != want {
				t.Fatalf("the cached FS and the uncached twin differ:\n%s\n---\n%s", got, want)
			}
		}
		for i, steps := 0, rapid.IntRange(1, 40).Draw(t, "steps"); i < steps; i++ {
			check() // fills the cache before the next change
			var op func(fsys *FS)
			switch rapid.IntRange(0, 11).Draw(t, "op") {
			case 10:
				// A clone starts from its original's remembered lookups,
				// on its own nodes: never one of the original's.
				c := m.Clone()
				for _, n := range names {
					got, _ := c.lookup(n)
					want, _ := c.walk(n)
					orig, _ := m.walk(n)
					if got != want || got != nil && got == orig {
						t.Fatalf("clone's lookup(%q) = %p; its walk gives %p, the original's %p", n, got, want, orig)
					}
					gd, _, _, _ := c.parentClean(n)
					od, _, _, _ := m.resolveParent(n)
					if wd, _, _, _ := c.resolveParent(n); gd != wd || gd != nil && gd == od {
						t.Fatalf("clone's parent(%q) = %p; resolved afresh %p, the original's %p", n, gd, wd, od)
					}
				}
				if rapid.Bool().Draw(t, "go on with the clone") {
					m, twin = c, twin.Clone()
				}
				continue
			case 0:
				n := name("w")
				op = func(fsys *FS) { _ = fsys.WriteFile(n, []byte("x"), 0o600) }
			case 1:
				n := name("o")
				op = func(fsys *FS) {
					if f, err := fsys.OpenFile(n, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
						_, _ = f.Write([]byte("y"))
						if st, err := f.Stat(); err == nil && st.Name() != path.Base(clean(n)) {
							t.Fatalf("Stat of %q opened: name %q, want %q", n, st.Name(), path.Base(clean(n)))
						}
						_ = f.Close()
					}
				}
			case 2:
				from, to := name("from"), name("to")
				op = func(fsys *FS) { _ = fsys.Rename(from, to) }
			case 3:
				from, to := name("from"), name("to")
				op = func(fsys *FS) { _ = fsys.Link(from, to) }
			case 4:
				n := name("rm")
				op = func(fsys *FS) { _ = fsys.Remove(n) }
			case 5:
				n := name("mk")
				op = func(fsys *FS) { _ = fsys.MkdirAll(n, 0o700) }
			case 6:
				n := name("lock")
				op = func(fsys *FS) {
					if u, err := fsys.Lock(n); err == nil {
						_ = u.Unlock()
					}
				}
			case 7:
				n := name("sync")
				op = func(fsys *FS) { _ = fsys.SyncDir(n) }
			case 8:
				op = func(fsys *FS) { fsys.Crash() }
			case 9:
				op = func(fsys *FS) { fsys.CrashKeeping(func(string, []byte) int { return 1 }) }
			case 11:
				n := name("stat")
				op = func(fsys *FS) {
					if st, err := fsys.Stat(n); err == nil && st.Name() != path.Base(clean(n)) {
						t.Fatalf("Stat(%q).Name() = %q, want %q", n, st.Name(), path.Base(clean(n)))
					}
				}
			}
			op(m)
			twin.lookups = lookupCache{gen: twin.treeGen + 1} // empty, and stale
			op(twin)
		}
		check()
	})
}

// dumpTree prints every name reachable from the root, through present and
// synced entries, with each file's bytes and synced bytes.
func dumpTree(m *FS) string {
	var b strings.Builder
	var walk func(n *node, p string, depth int)
	walk = func(n *node, p string, depth int) {
		if depth > 8 {
			return
		}
		if !n.dir {
			fmt.Fprintf(&b, "%s %q %q\n", p, n.data, n.synced)
			return
		}
		fmt.Fprintf(&b, "%s/ present", p)
		for _, e := range n.entries {
			fmt.Fprintf(&b, " %s", e.name)
		}
		b.WriteString(" synced")
		for _, e := range n.syncedEntries {
			fmt.Fprintf(&b, " %s", e.name)
		}
		b.WriteString("\n")
		for _, e := range n.entries {
			walk(e.n, p+"/"+e.name, depth+1)
		}
	}
	walk(m.root, "", 0)
	return b.String()
}
