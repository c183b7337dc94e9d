package memory_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// TestFSMatchesOS runs the same random operations on the memory FS and on
// real files and compares every outcome (success or failure class) and the
// resulting tree, so the memory FS cannot drift from what the adapters see
// in production. Crashes are not compared: the OS cannot be made to lose
// its page cache.
func TestFSMatchesOS(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		osRoot, err := os.MkdirTemp("", "memfs-diff-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(osRoot)
		m := memory.NewFS()
		sides := []struct {
			fs   vfs.FS
			root string
		}{{m, "/"}, {vfs.OS, osRoot}}
		names := []string{"a", "b", "d/a", "d/b", "d", "d/e/f"}
		name := func(t *rapid.T) string { return rapid.SampledFrom(names).Draw(t, "name") }
		class := func(err error) string {
			switch {
			case err == nil:
				return "ok"
			case errors.Is(err, fs.ErrNotExist):
				return "notexist"
			case errors.Is(err, fs.ErrExist):
				return "exist"
			default:
				return "error"
			}
		}
		both := func(t *rapid.T, op string, f func(vfs.FS, string) error) {
			var got []string
			for _, s := range sides {
				got = append(got, class(f(s.fs, s.root)))
			}
			if got[0] != got[1] {
				t.Fatalf("%s: memory %s, OS %s", op, got[0], got[1])
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"mkdir": func(t *rapid.T) {
				n := name(t)
				both(t, "mkdir "+n, func(f vfs.FS, r string) error { return f.MkdirAll(filepath.Join(r, n), 0o700) })
			},
			"write": func(t *rapid.T) {
				n := name(t)
				flags := rapid.SampledFrom([]int{
					os.O_WRONLY | os.O_CREATE | os.O_APPEND,
					os.O_WRONLY | os.O_CREATE | os.O_EXCL,
					os.O_RDWR | os.O_TRUNC,
					os.O_WRONLY | os.O_APPEND,
				}).Draw(t, "flags")
				data := rapid.StringMatching(`[a-z\n]{0,6}`).Draw(t, "data")
				sync := rapid.Bool().Draw(t, "sync")
				both(t, "write "+n, func(f vfs.FS, r string) error {
					h, err := f.OpenFile(filepath.Join(r, n), flags, 0o600)
					if err != nil {
						return err
					}
					defer h.Close()
					if _, err := h.Write([]byte(data)); err != nil {
						return err
					}
					if sync {
						return h.Sync()
					}
					return nil
				})
			},
			"truncate": func(t *rapid.T) {
				n, size := name(t), rapid.Int64Range(0, 8).Draw(t, "size")
				both(t, "truncate "+n, func(f vfs.FS, r string) error {
					h, err := f.OpenFile(filepath.Join(r, n), os.O_RDWR, 0)
					if err != nil {
						return err
					}
					defer h.Close()
					return h.Truncate(size)
				})
			},
			"rename": func(t *rapid.T) {
				a, b := name(t), name(t)
				both(t, "rename "+a+" "+b, func(f vfs.FS, r string) error { return f.Rename(filepath.Join(r, a), filepath.Join(r, b)) })
			},
			"link": func(t *rapid.T) {
				a, b := name(t), name(t)
				both(t, "link "+a+" "+b, func(f vfs.FS, r string) error { return f.Link(filepath.Join(r, a), filepath.Join(r, b)) })
			},
			"remove": func(t *rapid.T) {
				n := name(t)
				both(t, "remove "+n, func(f vfs.FS, r string) error { return f.Remove(filepath.Join(r, n)) })
			},
			"syncdir": func(t *rapid.T) {
				n := rapid.SampledFrom([]string{".", "d", "d/e"}).Draw(t, "dir")
				if st, err := os.Stat(filepath.Join(osRoot, n)); err == nil && !st.IsDir() {
					// The OS fsyncs a file handed to SyncDir; the memory FS
					// refuses, on purpose, so that such a caller bug shows.
					return
				}
				both(t, "syncdir "+n, func(f vfs.FS, r string) error { return f.SyncDir(filepath.Join(r, n)) })
			},
			"": func(t *rapid.T) {
				a, b := dump(t, m, "/"), dump(t, vfs.OS, osRoot)
				if a != b {
					t.Fatalf("trees differ:\nmemory:\n%s\nOS:\n%s", a, b)
				}
			},
		})
	})
}

func dump(t *rapid.T, f vfs.FS, root string) string {
	var b strings.Builder
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		es, err := f.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			p, r := filepath.Join(dir, e.Name()), rel+"/"+e.Name()
			if e.IsDir() {
				b.WriteString(r + "/\n")
				walk(p, r)
				continue
			}
			h, err := f.OpenFile(p, os.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(h)
			h.Close()
			if err != nil {
				t.Fatal(err)
			}
			st, _ := f.Stat(p)
			b.WriteString(r + " " + st.Mode().Perm().String() + " " + string(data) + "\n")
		}
	}
	walk(root, "")
	return b.String()
}
