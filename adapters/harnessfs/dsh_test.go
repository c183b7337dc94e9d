package harnessfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// dshTree is a root holding both layouts: v1 logs in their cwd buckets
// and _no-cwd, a v0 session directory in its project directory.
func dshTree(t testing.TB) (*memory.FS, harnessfs.DSH) {
	t.Helper()
	m := memory.NewFS()
	d := harnessfs.DSH{Root: "/srv/dsh"}
	proj, demo := "/work/proj", "/work/demo"
	projKey, err := dshlog.ProjectKey(demo)
	if err != nil {
		t.Fatal(err)
	}
	for path, body := range map[string]string{
		dshlog.Bucket(&proj) + "/sess-01.jsonl":            "v1",
		dshlog.Bucket(&proj) + "/sess-01.summary.json":     "{}",
		dshlog.Bucket(&proj) + "/sess-02.jsonl":            "v1",
		dshlog.NoCwdBucket + "/sess-03.jsonl":              "v1",
		projKey + "/sess-04/" + dshlog.V0ZstdName:          "v0",
		projKey + "/sess-05/" + dshlog.V0RawName:           "v0",
		dshlog.Bucket(&demo) + "/a~002Fb.jsonl":            "v1 of id a/b",
		dshlog.Bucket(&demo) + "/~002E~002E.jsonl":         "v1 of id ..",
		dshlog.Bucket(&demo) + "/sess-01.jsonl.tmp-abc":    "a temp file",
		dshlog.Bucket(&demo) + "/nested/sess-01.jsonl":     "not a bucket's file",
		dshlog.Bucket(&proj) + "/sess-06/session.jsonl.gz": "no such v0 name",
	} {
		if err := m.WriteFile(filepath.Join(d.Root, path), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return m, d
}

func paths(t *testing.T, root string, l harnessfs.Listing) []string {
	var out []string
	for _, s := range l.Sessions {
		rel, err := filepath.Rel(root, s.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("a session outside the root: %s", s.Path)
		}
		out = append(out, rel)
	}
	return out
}

func TestDSHDiscovery(t *testing.T) {
	m, d := dshTree(t)
	proj, demo := "/work/proj", "/work/demo"
	key, _ := dshlog.ProjectKey(demo)
	for _, c := range []struct {
		id, cwd string
		want    []string
	}{
		{"sess-01", "", []string{dshlog.Bucket(&proj) + "/sess-01.jsonl"}},
		{"sess-01", proj, []string{dshlog.Bucket(&proj) + "/sess-01.jsonl"}},
		{"sess-01", demo, nil}, // its log is in another workspace's bucket
		{"sess-03", "", []string{dshlog.NoCwdBucket + "/sess-03.jsonl"}},
		{"sess-04", "", []string{key + "/sess-04/" + dshlog.V0ZstdName}},
		{"sess-04", demo, []string{key + "/sess-04/" + dshlog.V0ZstdName}},
		{"sess-04", proj, nil},
		{"sess-05", "", []string{key + "/sess-05/" + dshlog.V0RawName}},
		{"sess-06", "", nil}, // session.jsonl.gz is no log
		// Hostile ids are found only under their encoded, one-segment names.
		{"a/b", "", []string{dshlog.Bucket(&demo) + "/a~002Fb.jsonl"}},
		{"..", "", []string{dshlog.Bucket(&demo) + "/~002E~002E.jsonl"}},
		{"../" + dshlog.Bucket(&proj) + "/sess-01", "", nil},
		{"nested/sess-01", "", nil},
		{"sess-01.jsonl.tmp-abc", "", nil},
	} {
		var l harnessfs.Listing
		var err error
		if c.cwd == "" {
			l, err = d.ByID(m, c.id)
		} else {
			l, err = d.ByWorkspace(m, c.cwd, c.id)
		}
		if err != nil {
			t.Fatalf("%q in %q: %v", c.id, c.cwd, err)
		}
		if diff := cmp.Diff(c.want, paths(t, d.Root, l)); diff != "" {
			t.Errorf("%q in %q (-want +got):\n%s", c.id, c.cwd, diff)
		}
		for _, s := range l.Sessions {
			if s.ID != c.id || s.Harness != "dsh" {
				t.Errorf("session %+v for id %q", s, c.id)
			}
		}
	}
}

func TestDSHHostileIDs(t *testing.T) {
	m, d := dshTree(t)
	for _, id := range []string{"", "\xff\xfe", strings.Repeat("é", 60), strings.Repeat("a", 250)} {
		if _, err := d.ByID(m, id); !errors.Is(err, harnessfs.ErrInvalidID) {
			t.Errorf("id %q: want ErrInvalidID, got %v", id, err)
		}
	}
	// A NUL, a newline or a glob is escaped, never a path's.
	for _, id := range []string{"a\x00b", "a\nb", "*", "sess-0?", "C:\\x", "/etc/passwd"} {
		l, err := d.ByID(m, id)
		if err != nil || len(l.Sessions) != 0 {
			t.Errorf("id %q: %+v %v", id, l, err)
		}
	}
	if _, err := d.ByWorkspace(m, "", "sess-01"); err == nil {
		t.Error("an empty workspace was accepted")
	}
}

func TestDSHSkipsLinks(t *testing.T) {
	m, d := dshTree(t)
	proj, demo := "/work/proj", "/work/demo"
	key, _ := dshlog.ProjectKey(demo)
	lf := linkFS{FS: m, links: map[string]bool{
		filepath.Join(d.Root, dshlog.Bucket(&proj), "sess-01.jsonl"): true, // the log
		filepath.Join(d.Root, key, "sess-04"):                        true, // a v0 session directory
		filepath.Join(d.Root, key, "sess-05", dshlog.V0RawName):      true, // a v0 log
		filepath.Join(d.Root, dshlog.NoCwdBucket):                    true, // a bucket
		filepath.Join(d.Root, dshlog.Bucket(&proj), "sess-02.jsonl"): true, // another session's: not reported
	}}
	for _, id := range []string{"sess-01", "sess-03", "sess-04", "sess-05"} {
		l, err := d.ByID(lf, id)
		if err != nil || len(l.Sessions) != 0 {
			t.Fatalf("%s: a link was followed: %+v %v", id, l, err)
		}
		if len(l.Skipped) == 0 {
			t.Errorf("%s: the link was not reported", id)
		}
		for _, s := range l.Skipped {
			if strings.Contains(s, "sess-02") {
				t.Errorf("%s: reports another session's link: %v", id, l.Skipped)
			}
		}
	}
	// In a workspace, only that workspace's directories are looked at.
	if l, err := d.ByWorkspace(lf, demo, "sess-03"); err != nil || len(l.Skipped) != 0 || len(l.Sessions) != 0 {
		t.Errorf("ByWorkspace reported another workspace's link: %+v %v", l, err)
	}
}

// TestDSHRealSymlinksOut: on the real filesystem, links out of the root —
// a log, a v0 session directory, a bucket, a FIFO — are never listed.
func TestDSHRealSymlinksOut(t *testing.T) {
	dir := t.TempDir()
	outside, root := filepath.Join(dir, "outside"), filepath.Join(dir, "root")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	proj := "/work/proj"
	key, _ := dshlog.ProjectKey(proj)
	bucket := filepath.Join(root, dshlog.Bucket(&proj))
	must(os.MkdirAll(filepath.Join(outside, "sess-02"), 0o700))
	must(os.MkdirAll(bucket, 0o700))
	must(os.MkdirAll(filepath.Join(root, key), 0o700))
	must(os.WriteFile(filepath.Join(outside, "secret.jsonl"), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(outside, "sess-02", dshlog.V0ZstdName), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(outside, "sess-03.jsonl"), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(bucket, "sess-00.jsonl"), []byte("v1"), 0o600))
	must(os.Symlink(filepath.Join(outside, "secret.jsonl"), filepath.Join(bucket, "sess-01.jsonl")))
	must(os.Symlink(filepath.Join(outside, "sess-02"), filepath.Join(root, key, "sess-02")))
	must(os.Symlink(outside, filepath.Join(root, dshlog.NoCwdBucket)))
	must(syscall.Mkfifo(filepath.Join(bucket, "sess-04.jsonl"), 0o600))
	d := harnessfs.DSH{Root: root}
	for _, id := range []string{"sess-01", "sess-02", "sess-03", "sess-04"} {
		l, err := d.ByID(vfs.OS, id)
		if err != nil || len(l.Sessions) != 0 || len(l.Skipped) == 0 {
			t.Errorf("%s: %+v %v", id, l, err)
		}
	}
	if l, err := d.ByWorkspace(vfs.OS, proj, "sess-00"); err != nil || len(l.Sessions) != 1 {
		t.Errorf("the real log: %+v %v", l, err)
	}
}

// FuzzDSHByID: any id is refused as invalid or looked up without error, and
// what it finds is the one file its encoded segment names, inside the root.
func FuzzDSHByID(f *testing.F) {
	for _, id := range []string{"sess-01", "a/b", "..", ".", "../x", "\x00", "\xed\xa0\x80", "~002E", "sess-04", strings.Repeat("é", 49)} {
		f.Add(id)
	}
	m, d := dshTree(f)
	f.Fuzz(func(t *testing.T, id string) {
		l, err := d.ByID(m, id)
		if err != nil {
			if !errors.Is(err, harnessfs.ErrInvalidID) {
				t.Fatalf("id %q: %v", id, err)
			}
			return
		}
		seg, err := harnessfs.DSHSegment(id)
		if err != nil || strings.ContainsAny(seg, "/\\\x00") || seg == "." || seg == ".." {
			t.Fatalf("id %q: segment %q %v", id, seg, err)
		}
		for _, s := range l.Sessions {
			rel, err := filepath.Rel(d.Root, s.Path)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Fatalf("id %q found %s outside the root", id, s.Path)
			}
			if filepath.Base(s.Path) != seg+".jsonl" && filepath.Base(filepath.Dir(s.Path)) != seg {
				t.Fatalf("id %q (segment %q) found %s", id, seg, s.Path)
			}
		}
	})
}

// TestDSHBothLayouts: one id in a v1 bucket and a v0 project directory is
// two sessions — the caller's to refuse as ambiguous, never to pick from.
func TestDSHBothLayouts(t *testing.T) {
	m, d := dshTree(t)
	key, _ := dshlog.ProjectKey("/work/proj")
	if err := m.WriteFile(filepath.Join(d.Root, key, "sess-01", dshlog.V0ZstdName), []byte("v0"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := d.ByID(m, "sess-01")
	if err != nil || len(l.Sessions) != 2 {
		t.Fatalf("%+v %v", l, err)
	}
	w, err := d.ByWorkspace(m, "/work/proj", "sess-01")
	if err != nil || len(w.Sessions) != 2 {
		t.Fatalf("by workspace: %+v %v", w, err)
	}
}
