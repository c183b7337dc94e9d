package harnessfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
)

const (
	id1 = "0199d3a1-7c2e-7b40-9f1a-2b3c4d5e6f70"
	id2 = "0199d3a1-7c2e-7b40-9f1a-2b3c4d5e6f71"
	id3 = "0199d3a1-7c2e-7b40-9f1a-2b3c4d5e6f72"
)

func meta(id, cwd string) string {
	return `{"timestamp":"2026-11-30T09:00:00.000Z","type":"session_meta","payload":{"id":"` + id + `","timestamp":"2026-11-30T09:00:00.000Z","cwd":"` + cwd + `","originator":"codex_cli_rs","cli_version":"0.169.0"}}` + "\n"
}

// linkFS marks some names as symlinks in directory listings: the memory FS
// has no links, and discovery must skip an entry by its listed type alone.
type linkFS struct {
	vfs.FS
	links map[string]bool
}

type linkEntry struct{ fs.DirEntry }

func (linkEntry) Type() fs.FileMode { return fs.ModeSymlink }

func (l linkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := l.FS.ReadDir(name)
	for i, e := range es {
		if l.links[filepath.Join(name, e.Name())] {
			es[i] = linkEntry{e}
		}
	}
	return es, err
}

func codexTree(t *testing.T) (*memory.FS, harnessfs.Codex) {
	m := memory.NewFS()
	c := harnessfs.Codex{Home: "/home/u/.codex"}
	for path, body := range map[string]string{
		"sessions/2026/11/30/rollout-2026-11-30T09-00-00-" + id1 + ".jsonl": meta(id1, "/work/demo"),
		"sessions/2026/11/29/rollout-2026-11-29T18-30-05-" + id2 + ".jsonl": meta(id2, "/work/other"),
		"archived_sessions/rollout-2026-10-01T08-00-00-" + id3 + ".jsonl":   meta(id3, "/work/demo/"),
		"sessions/2026/11/30/notes.txt":                                     "not a rollout",
		"sessions/2026/11/30/rollout-2026-11-30T10-00-00-not-a-uuid.jsonl":  "",
	} {
		if err := m.WriteFile(filepath.Join(c.Home, path), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return m, c
}

func ids(l harnessfs.Listing) []string {
	var out []string
	for _, s := range l.Sessions {
		out = append(out, s.ID)
	}
	return out
}

func TestCodexDiscovery(t *testing.T) {
	m, c := codexTree(t)
	l, err := c.Sessions(m)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{id2, id1, id3}, ids(l)); d != "" {
		t.Fatalf("sessions (-want +got):\n%s", d)
	}
	s, err := c.ByID(m, id3)
	if err != nil || !s.Archived || !strings.HasSuffix(s.Path, "archived_sessions/rollout-2026-10-01T08-00-00-"+id3+".jsonl") {
		t.Fatalf("ByID: %+v %v", s, err)
	}
	w, err := c.ByWorkspace(m, "/work/demo")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{id1, id3}, ids(w)); d != "" {
		t.Fatalf("by workspace (-want +got):\n%s", d)
	}
	if _, err := c.ByID(m, "0199d3a1-7c2e-7b40-9f1a-000000000000"); !errors.Is(err, harnessfs.ErrNotFound) {
		t.Fatalf("missing id: %v", err)
	}
}

func TestHostileIDs(t *testing.T) {
	m, c := codexTree(t)
	cl := harnessfs.Claude{ConfigDir: "/home/u/.claude"}
	for _, id := range []string{"", "../../etc/passwd", "a/b", "x\x00y", "*", strings.Repeat("a", 129), "é"} {
		if _, err := c.ByID(m, id); !errors.Is(err, harnessfs.ErrInvalidID) {
			t.Errorf("codex %q: %v", id, err)
		}
		if _, err := cl.ByID(m, id); !errors.Is(err, harnessfs.ErrInvalidID) {
			t.Errorf("claude %q: %v", id, err)
		}
	}
}

func TestCodexSkipsLinks(t *testing.T) {
	m, c := codexTree(t)
	day := filepath.Join(c.Home, "sessions/2026/11/30")
	lf := linkFS{FS: m, links: map[string]bool{
		filepath.Join(day, "rollout-2026-11-30T09-00-00-"+id1+".jsonl"): true,
		filepath.Join(c.Home, "sessions/2026/11/29"):                    true,
	}}
	l, err := c.Sessions(lf)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{id3}, ids(l)); d != "" {
		t.Fatalf("sessions (-want +got):\n%s", d)
	}
	if len(l.Skipped) != 2 {
		t.Fatalf("skipped: %v", l.Skipped)
	}
	if _, err := c.ByID(lf, id1); !errors.Is(err, harnessfs.ErrNotFound) {
		t.Fatalf("a linked rollout was found: %v", err)
	}
}

func TestProjectName(t *testing.T) {
	for cwd, want := range map[string]string{
		"/work/demo":                   "-work-demo",
		"/Users/me/My Project.v2":      "-Users-me-My-Project-v2",
		`C:\Users\khair`:               "C--Users-khair",
		"/tmp/caf\u00e9":               "-tmp-caf-",
		"/tmp/\U0001F600":              "-tmp---",
		"/" + strings.Repeat("a", 199): "-" + strings.Repeat("a", 199),
	} {
		if got := harnessfs.ProjectName(cwd); got != want {
			t.Errorf("ProjectName(%q) = %q, want %q", cwd, got, want)
		}
	}
	long := "/" + strings.Repeat("abcdefghij/", 25)
	// Past 200 characters: the first 200, "-", and the base-36 absolute
	// value of the bundle's hash, computed here as JavaScript evaluates
	// `e=(e<<5)-e+t.charCodeAt(n)|0`: a 32-bit shift, then double
	// arithmetic, then ToInt32.
	var e int32
	for _, c := range long {
		shifted := int32(uint32(e) << 5)
		e = int32(int64(float64(shifted) - float64(e) + float64(c)))
	}
	abs := int64(e)
	if abs < 0 {
		abs = -abs
	}
	want := strings.Repeat("-abcdefghij", 25)[:200] + "-" + strconv.FormatInt(abs, 36)
	if got := harnessfs.ProjectName(long); got != want {
		t.Fatalf("long name %q, want %q", got, want)
	}
}

func TestClaudeDiscovery(t *testing.T) {
	m := memory.NewFS()
	cl := harnessfs.ClaudeConfigDir(func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return "/cfg/claude"
		}
		return ""
	}, "/home/u")
	long := "/" + strings.Repeat("abcdefghij/", 25)
	name := harnessfs.ProjectName(long)
	for _, p := range []string{
		"projects/-work-demo/" + id1 + ".jsonl",
		"projects/-work-demo/" + id1 + "/subagents/agent-a1.jsonl",
		"projects/-work-other/" + id2 + ".jsonl",
		"projects/" + name[:200] + "-oldhash/" + id3 + ".jsonl",
	} {
		if err := m.WriteFile(filepath.Join("/cfg/claude", p), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cl.ByWorkspace(m, "/work/demo")
	if err != nil || len(w.Sessions) != 1 || w.Sessions[0].ID != id1 {
		t.Fatalf("by workspace: %+v %v", w, err)
	}
	if w, err := cl.ByWorkspace(m, long); err != nil || len(w.Sessions) != 1 || w.Sessions[0].ID != id3 {
		t.Fatalf("long workspace with another hash: %+v %v", w, err)
	}
	s, err := cl.ByID(m, id2)
	if err != nil || s.Project != "-work-other" {
		t.Fatalf("ByID: %+v %v", s, err)
	}
	lf := linkFS{FS: m, links: map[string]bool{filepath.Join("/cfg/claude/projects/-work-demo", id1+".jsonl"): true}}
	if w, err := cl.ByWorkspace(lf, "/work/demo"); err != nil || len(w.Sessions) != 0 || len(w.Skipped) != 1 {
		t.Fatalf("a linked transcript was listed: %+v %v", w, err)
	}
}

// TestRealSymlinksOut builds both roots on the real filesystem with links
// that point out of them — a file, a directory and a FIFO — and checks that
// discovery lists none of them.
func TestRealSymlinksOut(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(outside, "day"), 0o700))
	must(os.WriteFile(filepath.Join(outside, "secret.jsonl"), []byte(meta(id1, "/work/demo")), 0o600))
	must(os.WriteFile(filepath.Join(outside, "day", "rollout-2026-11-30T09-00-00-"+id2+".jsonl"), []byte(meta(id2, "/work/demo")), 0o600))

	home := filepath.Join(dir, "codex")
	day := filepath.Join(home, "sessions", "2026", "11", "30")
	must(os.MkdirAll(day, 0o700))
	must(os.WriteFile(filepath.Join(day, "rollout-2026-11-30T08-00-00-"+id3+".jsonl"), []byte(meta(id3, "/work/demo")), 0o600))
	must(os.Symlink(filepath.Join(outside, "secret.jsonl"), filepath.Join(day, "rollout-2026-11-30T09-00-00-"+id1+".jsonl")))
	must(os.Symlink(filepath.Join(outside, "day"), filepath.Join(home, "sessions", "2026", "11", "29")))
	must(syscall.Mkfifo(filepath.Join(day, "rollout-2026-11-30T10-00-00-0199d3a1-7c2e-7b40-9f1a-2b3c4d5e6f79.jsonl"), 0o600))

	c := harnessfs.CodexHome(func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}, "/nonexistent")
	l, err := c.ByWorkspace(vfs.OS, "/work/demo")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{id3}, ids(l)); d != "" {
		t.Fatalf("sessions (-want +got):\n%s", d)
	}
	if len(l.Skipped) != 3 {
		t.Fatalf("skipped %v", l.Skipped)
	}

	cfg := filepath.Join(dir, "claude")
	proj := filepath.Join(cfg, "projects", "-work-demo")
	must(os.MkdirAll(proj, 0o700))
	must(os.Symlink(filepath.Join(outside, "secret.jsonl"), filepath.Join(proj, id1+".jsonl")))
	must(os.Symlink(outside, filepath.Join(cfg, "projects", "-work-other")))
	cl := harnessfs.Claude{ConfigDir: cfg}
	if _, err := cl.ByID(vfs.OS, id1); !errors.Is(err, harnessfs.ErrNotFound) {
		t.Fatalf("claude followed a link: %v", err)
	}
	all, err := cl.Sessions(vfs.OS)
	if err != nil || len(all.Sessions) != 0 || len(all.Skipped) != 2 {
		t.Fatalf("claude sessions %+v %v", all, err)
	}
}

func TestClaudeProjectDirOverride(t *testing.T) {
	env := func(m map[string]string) harnessfs.Env { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"CLAUDE_CODE_PROJECT_DIR_NAME": "shared"}, ""}, // only with CLAUDE_CONFIG_DIR
		{map[string]string{"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "shared"}, "shared"},
		{map[string]string{"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "../up"}, ""},
		{map[string]string{"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "COM1"}, ""},
		{map[string]string{"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": strings.Repeat("a", 65)}, ""},
	} {
		if got := harnessfs.ClaudeConfigDir(env(c.vars), "/home/u").ProjectDir; got != c.want {
			t.Errorf("%v: project dir %q, want %q", c.vars, got, c.want)
		}
	}
	m := memory.NewFS()
	if err := m.WriteFile("/c/projects/shared/"+id1+".jsonl", []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cl := harnessfs.ClaudeConfigDir(env(map[string]string{"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "shared"}), "/home/u")
	if l, err := cl.ByWorkspace(m, "/any/where"); err != nil || len(l.Sessions) != 1 {
		t.Fatalf("override: %+v %v", l, err)
	}
}
