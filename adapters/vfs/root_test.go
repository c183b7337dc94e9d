package vfs_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// tree makes root/{in.txt, sub/}, a sibling outside/secret.txt, and links
// below root: back to in.txt, out to the secret, out to the outside
// directory, and an absolute link.
func tree(t *testing.T) (base, rootDir string) {
	t.Helper()
	base = t.TempDir()
	rootDir = filepath.Join(base, "root")
	must(t, os.MkdirAll(filepath.Join(rootDir, "sub"), 0o700))
	must(t, os.MkdirAll(filepath.Join(base, "outside"), 0o700))
	must(t, os.WriteFile(filepath.Join(rootDir, "in.txt"), []byte("inside"), 0o600))
	must(t, os.WriteFile(filepath.Join(base, "outside", "secret.txt"), []byte("secret"), 0o600))
	must(t, os.Symlink("in.txt", filepath.Join(rootDir, "link-in")))
	must(t, os.Symlink("../outside/secret.txt", filepath.Join(rootDir, "link-out")))
	must(t, os.Symlink("../outside", filepath.Join(rootDir, "dir-out")))
	must(t, os.Symlink(filepath.Join(base, "outside", "secret.txt"), filepath.Join(rootDir, "link-abs")))
	return base, rootDir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRootedFollowsLinksOnlyInsideTheRoot(t *testing.T) {
	base, rootDir := tree(t)
	fsys, err := vfs.Within(rootDir)
	must(t, err)
	defer fsys.Close()

	f, err := fsys.OpenFile(filepath.Join(rootDir, "link-in"), os.O_RDONLY, 0)
	must(t, err)
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "inside" {
		t.Fatalf("a link inside the root read %q", b)
	}
	for _, name := range []string{"link-out", "link-abs", "dir-out/secret.txt", "dir-out/new.txt"} {
		p := filepath.Join(rootDir, name)
		for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_APPEND, os.O_RDWR | os.O_CREATE} {
			if f, err := fsys.OpenFile(p, flag, 0o600); !errors.Is(err, vfs.ErrOutsideRoot) {
				if f != nil {
					f.Close()
				}
				t.Errorf("open %s flag %#x: %v, want ErrOutsideRoot", name, flag, err)
			}
		}
	}
	if err := fsys.MkdirAll(filepath.Join(rootDir, "dir-out", "chats"), 0o700); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Errorf("mkdir through a link out: %v", err)
	}
	if _, err := fsys.Lock(filepath.Join(rootDir, "dir-out", "x.lock")); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Errorf("lock through a link out: %v", err)
	}
	if _, err := fsys.OpenFile(filepath.Join(base, "outside", "secret.txt"), os.O_RDONLY, 0); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Errorf("a path outside every root: %v", err)
	}
	if err := fsys.Rename(filepath.Join(rootDir, "in.txt"), filepath.Join(base, "moved")); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Errorf("rename out of the root: %v", err)
	}
	// Nothing outside was created or changed.
	entries, _ := os.ReadDir(filepath.Join(base, "outside"))
	if len(entries) != 1 {
		t.Fatalf("outside holds %d entries", len(entries))
	}
	if b, _ := os.ReadFile(filepath.Join(base, "outside", "secret.txt")); string(b) != "secret" {
		t.Fatalf("secret changed: %q", b)
	}
}

func TestRootedRootMayBeALink(t *testing.T) {
	base, rootDir := tree(t)
	alias := filepath.Join(base, "alias")
	must(t, os.Symlink(rootDir, alias))
	fsys, err := vfs.Within(alias)
	must(t, err)
	defer fsys.Close()
	p := filepath.Join(alias, "sub", "new.jsonl")
	f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	must(t, err)
	f.Write([]byte("x"))
	f.Close()
	if b, _ := os.ReadFile(filepath.Join(rootDir, "sub", "new.jsonl")); string(b) != "x" {
		t.Fatalf("write through the named root link: %q", b)
	}
	must(t, fsys.SyncDir(filepath.Join(alias, "sub")))
	// The root's ancestors may be synced (ADR 0004's directory chain), nothing else.
	must(t, fsys.SyncDir(base))
	must(t, fsys.SyncDir("/"))
}

func TestRootedOperations(t *testing.T) {
	_, rootDir := tree(t)
	other := t.TempDir()
	fsys, err := vfs.Within(rootDir, other, rootDir)
	must(t, err)
	defer fsys.Close()
	if got := fsys.Roots(); len(got) != 2 {
		t.Fatalf("roots %v", got)
	}
	d := filepath.Join(rootDir, "a", "b")
	must(t, fsys.MkdirAll(d, 0o700))
	p := filepath.Join(d, "f")
	f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	must(t, err)
	f.Close()
	must(t, fsys.Link(p, p+".2"))
	must(t, fsys.Rename(p+".2", p+".3"))
	names := func() []string {
		es, err := fsys.ReadDir(d)
		must(t, err)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"f", "f.3"}) {
		t.Fatalf("readdir %v", got)
	}
	must(t, fsys.Remove(p+".3"))
	if _, err := fsys.Stat(p + ".3"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat removed: %v", err)
	}
	if st, err := fsys.Lstat(filepath.Join(rootDir, "link-in")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("lstat link: %v %v", st, err)
	}
	lk, err := fsys.Lock(filepath.Join(other, "x", "y.lock"))
	must(t, err)
	must(t, lk.Unlock())
	if err := fsys.Link(p, filepath.Join(other, "cross")); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Fatalf("link across roots: %v", err)
	}
	if _, err := vfs.Within(filepath.Join(rootDir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing root: %v", err)
	}
}
