package jsonl_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
)

func TestResolveRuntimeDir(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		getenv func(string) string
		home   string
		want   string
	}{
		{env(), "/home/u", "/home/u/.qwen"},
		{nil, "/home/u", "/home/u/.qwen"},
		{env("QWEN_HOME", "/opt/qwen"), "/home/u", "/opt/qwen"},
		{env("QWEN_HOME", "/opt/qwen", "QWEN_RUNTIME_DIR", "/run/qwen/"), "/home/u", "/run/qwen"},
		{env("QWEN_RUNTIME_DIR", "/run/qwen"), "", "/run/qwen"},
		{env("QWEN_RUNTIME_DIR", "", "QWEN_HOME", ""), "/home/u", "/home/u/.qwen"},
		{env("QWEN_RUNTIME_DIR", "~"), "/home/u", "/home/u"},
		{env("QWEN_RUNTIME_DIR", "~/rt/x"), "/home/u", "/home/u/rt/x"},
		{env("QWEN_RUNTIME_DIR", `~\rt\\x`), "/home/u", "/home/u/rt/x"},
		{env("QWEN_RUNTIME_DIR", "~rt"), "/home/u", "~rt"},
		{env("QWEN_RUNTIME_DIR", "rel/dir/"), "/home/u", "rel/dir"},
	} {
		got, err := jsonl.ResolveRuntimeDir(c.getenv, c.home)
		if err != nil || got != c.want {
			t.Errorf("ResolveRuntimeDir(home %q) = %q, %v; want %q", c.home, got, err, c.want)
		}
	}
	if _, err := jsonl.ResolveRuntimeDir(env(), ""); !errors.Is(err, jsonl.ErrNoRuntimeDir) {
		t.Errorf("nothing to resolve from = %v", err)
	}
}

func TestSanitizeCwd(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/ws-ifVqOn":         "-tmp-ws-ifVqOn",
		"/home/me/My Project.v2": "-home-me-My-Project-v2",
		"/srv/café":              "-srv-caf-",
		"/srv/😀":                 "-srv---", // one astral character = two UTF-16 code units
		"/srv/\xff":              "-srv--",
		"":                       "",
	} {
		if got := jsonl.SanitizeCwd(in); got != want {
			t.Errorf("SanitizeCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLayoutPaths(t *testing.T) {
	l := jsonl.NewQwenLayout("/home/u/.qwen", "/tmp/ws-ifVqOn")
	id := "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"
	check := func(got string, err error, want string) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	}
	chats := "/home/u/.qwen/projects/-tmp-ws-ifVqOn/chats"
	p, err := l.TranscriptPath(id, jsonl.Active)
	check(p, err, chats+"/"+id+".jsonl")
	p, err = l.LedgerPath(id, jsonl.Active)
	check(p, err, chats+"/"+id+".ledger.jsonl")
	p, err = l.TranscriptPath(id, jsonl.Archived)
	check(p, err, chats+"/archive/"+id+".jsonl")
	p, err = l.LedgerPath(id, jsonl.Archived)
	check(p, err, chats+"/archive/"+id+".ledger.jsonl")
	if _, err := l.LedgerPath(id, "deleted"); err == nil {
		t.Error("unknown state accepted")
	}
}

func TestIsTranscriptName(t *testing.T) {
	id := "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"
	for name, want := range map[string]bool{
		id + ".jsonl": true,
		strings.ReplaceAll(id, "-", "") + ".jsonl": true,
		id + ".ledger.jsonl":                       false,
		id + ".worktree.json":                      false,
		id + ".pr.json":                            false,
		id + ".ledger.lock":                        false,
		"notes.jsonl":                              false,
		"0b9a61a2.jsonl":                           false,
	} {
		if got := jsonl.IsTranscriptName(name); got != want {
			t.Errorf("IsTranscriptName(%q) = %v", name, got)
		}
	}
}

func TestCheckSessionID(t *testing.T) {
	for _, id := range []string{"0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10", "abc", "-leading-dash", "..x", "x..", "a b", "é"} {
		if err := jsonl.CheckSessionID(id); err != nil {
			t.Errorf("CheckSessionID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "a/b", "/abs", `a\b`, "a\x00b", "a\nb", "a\x7fb", "x.ledger", "X.LEDGER",
		strings.Repeat("a", 256), "\xff"} {
		err := jsonl.CheckSessionID(id)
		if !errors.Is(err, adapters.ErrInvalidSessionID) || !strings.HasPrefix(err.Error(), "jsonl: ") {
			t.Errorf("CheckSessionID(%q) = %v, want a jsonl: error wrapping ErrInvalidSessionID", id, err)
		}
	}
}

// TestLayoutScenarios runs testdata/layout/*.txt: archive, unarchive,
// conflict resolution, removal and scans on the strict memory FS, printing
// the chats tree after each step.
func TestLayoutScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/layout", func(t *testing.T, path string) {
		m := memory.NewFS()
		layout := memory.DefaultQwenLayout
		s := memory.NewQwenStoreOn(m, layout)
		ctx := context.Background()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			id := "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"
			if d.HasArg("id") {
				d.ScanArgs(t, "id", &id)
			}
			state := jsonl.Active
			if d.HasArg("archived") {
				state = jsonl.Archived
			}
			switch d.Cmd {
			case "transcript", "ledger", "file":
				var p string
				var err error
				switch d.Cmd {
				case "transcript":
					p, err = layout.TranscriptPath(id, state)
				case "ledger":
					p, err = layout.LedgerPath(id, state)
				default:
					var name string
					d.ScanArgs(t, "name", &name)
					p = filepath.Join(layout.ChatsDir(state), name)
				}
				if err != nil {
					return err.Error()
				}
				data := d.Input
				if data != "" && !d.HasArg("torn") {
					data += "\n"
				}
				if err := m.WriteFile(p, []byte(data), 0o600); err != nil {
					return err.Error()
				}
				return ""
			case "append":
				for _, line := range strings.Split(d.Input, "\n") {
					if err := s.AppendLedger(ctx, id, []byte(line)); err != nil {
						return err.Error()
					}
				}
				return tree(t, m, layout)
			case "archive", "unarchive":
				move := s.Archive
				if d.Cmd == "unarchive" {
					move = s.Unarchive
				}
				warnings, err := move(ctx, id)
				var b strings.Builder
				for _, w := range warnings {
					fmt.Fprintf(&b, "warning: %v\n", w)
				}
				if err != nil {
					fmt.Fprintf(&b, "error: %v\n", err)
				}
				return b.String() + tree(t, m, layout)
			case "remove":
				if err := s.RemoveSession(ctx, id); err != nil {
					return "error: " + err.Error()
				}
				return tree(t, m, layout)
			case "scan":
				ids, err := s.ScanTranscripts(ctx, state)
				if err != nil {
					return "error: " + err.Error()
				}
				if len(ids) == 0 {
					return "(none)\n"
				}
				return strings.Join(ids, "\n") + "\n"
			case "fail":
				var op string
				d.ScanArgs(t, "op", &op)
				f := memory.Fault{Op: memory.Op(op)}
				if d.HasArg("path") {
					var name string
					d.ScanArgs(t, "path", &name)
					f.Path = filepath.Join(layout.ChatsDir(jsonl.Active), name)
				}
				m.Inject(f)
				return ""
			case "crash":
				m.Crash()
				s = memory.NewQwenStoreOn(m, layout)
				return tree(t, m, layout)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// tree prints every file under the chats directory with its contents; a
// missing final newline shows as "⏎missing".
func tree(t *testing.T, m *memory.FS, l jsonl.QwenLayout) string {
	t.Helper()
	root := l.ChatsDir(jsonl.Active)
	var files []string
	var walk func(dir string)
	walk = func(dir string) {
		es, err := m.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() {
				walk(p)
				continue
			}
			files = append(files, p)
		}
	}
	walk(root)
	sort.Strings(files)
	var b strings.Builder
	if len(files) == 0 {
		b.WriteString("(no files)\n")
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		data, err := m.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:\n", rel)
		s := string(data)
		if s == "" {
			b.WriteString("  (empty)\n")
			continue
		}
		torn := !strings.HasSuffix(s, "\n")
		for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			fmt.Fprintf(&b, "  |%s\n", line)
		}
		if torn {
			b.WriteString("  ⏎missing\n")
		}
	}
	return b.String()
}
