package memory

import (
	"errors"
	"os"
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
		names := []string{"/a", "/b", "/d", "/d/a", "/d/b", "/d/e", "/d/e/f", "d/a", "/d/./b", "/d/../a", "/d/e/", "/x/y"}
		name := func(label string) string { return rapid.SampledFrom(names).Draw(t, label) }
		check := func() {
			for _, n := range names {
				got, gotErr := m.lookup(n)
				want, wantErr := m.walk(n)
				if got != want || !errors.Is(gotErr, wantErr) && (gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error()) {
					t.Fatalf("lookup(%q) = %p, %v; a walk from the root gives %p, %v", n, got, gotErr, want, wantErr)
				}
			}
		}
		for i, steps := 0, rapid.IntRange(1, 40).Draw(t, "steps"); i < steps; i++ {
			check() // fills the cache before the next change
			switch rapid.IntRange(0, 10).Draw(t, "op") {
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
				}
				if rapid.Bool().Draw(t, "go on with the clone") {
					m = c
				}
			case 0:
				_ = m.WriteFile(name("w"), []byte("x"), 0o600)
			case 1:
				if f, err := m.OpenFile(name("o"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
					_, _ = f.Write([]byte("y"))
					_ = f.Close()
				}
			case 2:
				_ = m.Rename(name("from"), name("to"))
			case 3:
				_ = m.Link(name("from"), name("to"))
			case 4:
				_ = m.Remove(name("rm"))
			case 5:
				_ = m.MkdirAll(name("mk"), 0o700)
			case 6:
				if u, err := m.Lock(name("lock")); err == nil {
					_ = u.Unlock()
				}
			case 7:
				_ = m.SyncDir(name("sync"))
			case 8:
				m.Crash()
			case 9:
				m.CrashKeeping(func(string, []byte) int { return 1 })
			}
		}
		check()
	})
}
