package memory

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// elems lists the elements next yields from a path clean returned.
func elems(c string) []string {
	var out []string
	for rest := c[1:]; rest != ""; {
		var e string
		e, rest = next(rest)
		out = append(out, e)
	}
	return out
}

// checkPath holds the fast path handling to what every operation did before
// it existed: split the cleaned name, join it back, and resolve a parent by
// the joined path of all elements but the last.
func checkPath(t *testing.T, name string) {
	t.Helper()
	parts := split(name)
	want := "/" + strings.Join(parts, "/")
	c := clean(name)
	if c != want {
		t.Fatalf("clean(%q) = %q, want %q", name, c, want)
	}
	if isClean(name) && name != want {
		t.Fatalf("isClean(%q) but its clean form is %q", name, want)
	}
	if isClean(name) != (name == want) && filepath.Separator == '/' {
		t.Fatalf("isClean(%q) = %v, but clean form is %q", name, isClean(name), want)
	}
	if got := elems(c); !slices.Equal(got, parts) {
		t.Fatalf("elements of %q = %q, want %q", name, got, parts)
	}
	if len(parts) == 0 {
		return
	}
	i := strings.LastIndexByte(c, '/')
	dir := c[:i]
	if i == 0 {
		dir = "/"
	}
	if wantDir := "/" + strings.Join(parts[:len(parts)-1], "/"); dir != wantDir || c[i+1:] != parts[len(parts)-1] {
		t.Fatalf("parent of %q = (%q, %q), want (%q, %q)", name, dir, c[i+1:], wantDir, parts[len(parts)-1])
	}
}

func TestCleanMatchesSplit(t *testing.T) {
	for _, name := range []string{
		"", "/", "//", "///", ".", "..", "/.", "/..", "./", "../", "a", "a/", "/a", "/a/", "//a", "/a//b",
		"/a/./b", "/a/../b", "/a/b/..", "/a/b/.", "../a", "../../a/b", "a/../..", "/.a", "/..a", "/a..",
		"/a/.../b", "/home/user/.qwen/projects/p/chats/s.jsonl", "/a\x00b", "/ä/ö", `/a\b`,
	} {
		checkPath(t, name)
	}
}

func FuzzCleanMatchesSplit(f *testing.F) {
	for _, s := range []string{"", "/", "/a/b", "a/../..", "/a//b/./c/", "../x", "/.hidden/.."} {
		f.Add(s)
	}
	f.Fuzz(checkPath)
}

func TestOpIndex(t *testing.T) {
	for i, op := range ops {
		if opIndex(op) != i {
			t.Fatalf("opIndex(%s) = %d, want %d", op, opIndex(op), i)
		}
	}
	if opIndex("nonsense") != -1 {
		t.Fatal("an unknown op has an index")
	}
}

func TestJoinMatchesPathJoin(t *testing.T) {
	for _, dir := range []string{"/", "/a", "/a/b", "/.x", "/a/..b"} { // as Join returns them
		for _, name := range []string{"x", ".x", "..x", "..", ".", ""} {
			if got, want := join(dir, name), path.Join(dir, name); got != want {
				t.Errorf("join(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}
