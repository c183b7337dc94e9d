package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/service"
)

// schemaDir holds the published schemas, one per command output (ADR 0027).
const schemaDir = "../../docs/schemas"

// schemaSet compiles the published schemas once and counts, per schema
// (and per branch of replay's oneOf), the real documents that matched it.
type schemaSet struct {
	t        *testing.T
	dir      string
	c        *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
	matched  map[string]int
}

func newSchemaSet(t *testing.T) *schemaSet {
	dir, err := filepath.Abs(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	return &schemaSet{t: t, dir: dir, c: c, compiled: map[string]*jsonschema.Schema{}, matched: map[string]int{}}
}

func (s *schemaSet) schema(ref string) *jsonschema.Schema {
	s.t.Helper()
	if sch, ok := s.compiled[ref]; ok {
		return sch
	}
	sch, err := s.c.Compile(filepath.Join(s.dir, ref))
	if err != nil {
		s.t.Fatalf("compile %s: %v", ref, err)
	}
	s.compiled[ref] = sch
	return sch
}

// check validates one real document against ref (a file, or file#pointer),
// then the same document with a field no schema knows, which must fail: a
// schema that accepts anything proves nothing.
func (s *schemaSet) check(ref, what string, doc []byte) {
	s.t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		s.t.Errorf("%s: not JSON: %v\n%s", what, err, doc)
		return
	}
	if err := s.schema(ref).Validate(v); err != nil {
		s.t.Errorf("%s does not match %s: %v\n%s", what, ref, err, clip(doc))
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		s.t.Errorf("%s: a document must be a JSON object, got %s", what, clip(doc))
		return
	}
	if obj["schemaVersion"] != json.Number("1") {
		s.t.Errorf("%s: schemaVersion %v, want 1", what, obj["schemaVersion"])
	}
	obj["undocumentedField"] = true
	if err := s.schema(ref).Validate(obj); err == nil {
		s.t.Errorf("%s: %s accepts a field it does not document (additionalProperties)", what, ref)
	}
	delete(obj, "undocumentedField")
	s.matched[ref]++
}

// lines checks every line of out against ref.
func (s *schemaSet) lines(ref, what string, out []byte) {
	s.t.Helper()
	n := 0
	for l := range bytes.Lines(out) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			s.check(ref, what, l)
			n++
		}
	}
	if n == 0 {
		s.t.Errorf("%s printed no document", what)
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// runJSON runs a command as the binary would and returns its stdout; the
// exit code must be want.
func runJSON(t *testing.T, want int, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb); code != want {
		t.Fatalf("tailproof %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), code, want, errb.String())
	}
	return out.Bytes()
}

// copyTree copies the directory src to dst (regular files and directories).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

const (
	exampleWS        = "/work/demo"
	exampleCompleted = "b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d"
	exampleToolTurn  = "4a9d8c2e-6b1f-4e7a-8c3d-5f6e7a8b9c0d"
)

// TestSchemas runs every command that prints JSON, for real, on the bundled
// examples and the states a crash leaves, and validates each document it
// prints against its published schema under docs/schemas/. It fails when an
// output has a field its schema does not know, when a schema accepts a
// field it does not document, and when a schema (or a branch of replay's
// oneOf) matched no real output.
func TestSchemas(t *testing.T) {
	s := newSchemaSet(t)
	tmp := t.TempDir()
	rt := filepath.Join(tmp, "qwen")
	copyTree(t, "../../examples/qwen", rt)
	chats := filepath.Join(rt, "projects", "-work-demo", "chats")
	// A kill right after admission: a ledger and a missing, or an empty,
	// transcript.
	const missingT, emptyT = "11111111-0000-4000-8000-000000000001", "22222222-0000-4000-8000-000000000002"
	for _, id := range []string{missingT, emptyT} {
		if err := os.WriteFile(filepath.Join(chats, id+".ledger.jsonl"), []byte(hostileLedger), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(chats, emptyT+".jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	qwen := func(id string, more ...string) []string {
		return append([]string{"--qwen-runtime", rt, "--cwd", exampleWS, "--session", id}, more...)
	}
	files := func(name string, more ...string) []string {
		return append([]string{"--ledger", filepath.Join(chats, name+".ledger.jsonl"), "--transcript", filepath.Join(chats, name+".jsonl")}, more...)
	}

	t.Run("reconcile", func(t *testing.T) {
		for _, args := range [][]string{
			qwen(exampleCompleted, "--dry-run"),
			qwen(exampleToolTurn, "--dry-run", "--trace"),
			qwen(exampleCompleted, "--dry-run", "--reference"),
			qwen(missingT, "--dry-run"),
			files(exampleToolTurn, "--dry-run", "--trace"),
			qwen(exampleCompleted, "--now", "1900000000000"), // appends: "appended"
		} {
			out := runJSON(t, cli.OK, append([]string{"reconcile", "--json"}, args...)...)
			s.check("reconcile.schema.json", "reconcile "+strings.Join(args, " "), out)
			if slices.Contains(args, "--trace") && !bytes.Contains(out, []byte(`"trace":["`)) {
				t.Errorf("reconcile --json --trace dropped the trace: %s", clip(out))
			}
		}
	})
	t.Run("status", func(t *testing.T) {
		for _, c := range []struct {
			args  []string
			state string
		}{
			{qwen(exampleCompleted), "present"},
			{qwen(exampleToolTurn, "--trace"), "present"},
			{qwen(missingT), "missing"},
			{qwen(emptyT), "empty"},
			{[]string{"--transcript", filepath.Join(chats, exampleToolTurn+".jsonl"), "--reference"}, "present"},
			{[]string{"--harness", "qwen", "--file", filepath.Join(chats, exampleToolTurn+".jsonl")}, "present"},
			{[]string{"--harness", "qwen", "--file", filepath.Join(chats, exampleToolTurn+".jsonl"), "--ledger", filepath.Join(chats, exampleToolTurn+".ledger.jsonl")}, "present"},
		} {
			out := runJSON(t, cli.OK, append([]string{"status", "--json"}, c.args...)...)
			s.check("status.schema.json", "status "+strings.Join(c.args, " "), out)
			if !bytes.Contains(out, []byte(`"transcriptState":"`+c.state+`"`)) {
				t.Errorf("status %s: want transcriptState %s: %s", strings.Join(c.args, " "), c.state, clip(out))
			}
			if slices.Contains(c.args, "--trace") && !bytes.Contains(out, []byte(`"trace":["`)) {
				t.Errorf("status --json --trace dropped the trace: %s", clip(out))
			}
			// Every state names the prompt in flight or the chain's last:
			// the turn object is there (its shape is harness-status's).
			if !bytes.Contains(out, []byte(`"turn":{"id":"`)) {
				t.Errorf("status %s: no turn object: %s", strings.Join(c.args, " "), clip(out))
			}
			// A missing or empty transcript settled no turn: the reason
			// names the prompt in flight and says what reconcile decides —
			// unknown for a missing one, interrupted (never started) for an
			// empty one with no archived copy (ADR 0023, 2026-12-01) — and a
			// notice is supported.
			if c.state != "present" {
				var st struct {
					Reason  string `json:"reason"`
					Support struct {
						Notice struct{ Supported bool } `json:"notice"`
					} `json:"support"`
				}
				if err := json.Unmarshal(out, &st); err != nil {
					t.Fatal(err)
				}
				// Missing or empty with no archived copy: no turn wrote a
				// record (ADR 0023, 2026-12-01).
				want := "reconcile: interrupted"
				if strings.HasPrefix(st.Reason, "the last turn settled") || !strings.Contains(st.Reason, want) || !st.Support.Notice.Supported {
					t.Errorf("status %s: transcript %s, but reason %q, notice supported %t", strings.Join(c.args, " "), c.state, st.Reason, st.Support.Notice.Supported)
				}
			}
		}
	})
	t.Run("replay", func(t *testing.T) {
		dshCopy := filepath.Join(tmp, "dsh.jsonl")
		b, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dshCopy, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			qwen(exampleCompleted),
			qwen(exampleToolTurn, "--crash-at", "3"),
			qwen(exampleCompleted, "--crash-at", "all"),
			{"--dir", rt},
			{"--dsh", dshCopy},
		} {
			out := runJSON(t, cli.OK, append([]string{"replay", "--json"}, args...)...)
			what := "replay " + strings.Join(args, " ")
			s.lines("replay.schema.json", what, out)
			for l := range bytes.Lines(out) {
				s.branch(what, l, "step", "decisionLine", "crashRow", "batch")
			}
		}
	})
	t.Run("dsh recover", func(t *testing.T) {
		v1 := filepath.Join(tmp, "v1.jsonl")
		b, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(v1, b, 0o600); err != nil {
			t.Fatal(err)
		}
		v0 := filepath.Join(tmp, "v0")
		copyTree(t, "../../examples/dsh/v0", v0)
		for _, f := range []string{v1, filepath.Join(v0, "--home-me-proj--", "sess-01", "session.jsonl.zstd")} {
			s.check("dsh-recover.schema.json", "dsh recover "+f, runJSON(t, cli.OK, "dsh", "recover", "--json", "--file", f))
		}
	})
	t.Run("serve", func(t *testing.T) {
		var out, errb bytes.Buffer
		stdin := strings.NewReader(exampleCompleted + "\n" + exampleToolTurn + "\n" + missingT + "\n")
		if code := runServe(context.Background(), []string{"--qwen-runtime", rt, "--cwd", exampleWS, "--dry-run"}, stdin, &out, &errb); code != cli.OK {
			t.Fatalf("serve: exit %d: %s", code, errb.String())
		}
		s.lines("result.schema.json", "serve --dry-run", out.Bytes())
		stdin = strings.NewReader(exampleToolTurn + "\n")
		out.Reset()
		if code := runServe(context.Background(), []string{"--qwen-runtime", rt, "--cwd", exampleWS, "--now", "1900000000000"}, stdin, &out, &errb); code != cli.OK {
			t.Fatalf("serve: exit %d: %s", code, errb.String())
		}
		s.lines("result.schema.json", "serve", out.Bytes())
	})
	t.Run("bus sink", func(t *testing.T) {
		// What the recovery service publishes: the decision document on
		// the decision topic, each appended record on the terminal topic
		// (a ledger record in Qwen Code 0.24.4's format, versioned by its
		// own "v").
		fresh := filepath.Join(tmp, "qwen-bus") // the other cases settled the examples' prompts
		copyTree(t, "../../examples/qwen", fresh)
		fsys, err := vfs.Within(fresh)
		if err != nil {
			t.Fatal(err)
		}
		defer fsys.Close()
		store := jsonl.NewQwenStore(fsys, jsonl.NewQwenLayout(fresh, exampleWS))
		d, err := service.Decider(store, tailproof.Options{Now: func() int64 { return 1900000000000 }})(context.Background(), exampleToolTurn)
		if err != nil {
			t.Fatal(err)
		}
		s.check("result.schema.json", "the bus's decision document", d.Document)
		if len(d.Terminals) == 0 {
			t.Fatalf("no terminal published: %s", d.Document)
		}
		for _, tm := range d.Terminals {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(tm.Line))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.schema("result.schema.json#/$defs/terminal").Validate(v); err != nil {
				t.Errorf("the bus's terminal %s: %v", tm.Line, err)
			}
		}
	})
	t.Run("simulate", func(t *testing.T) {
		for _, args := range [][]string{{"--runs", "40"}, {"--runs", "40", "--seed", "3", "--ambiguity"}, {"--runs", "1", "--scenario", "5", "--trace"}} {
			out := runJSON(t, cli.OK, append([]string{"simulate", "--json", "--workers", "1"}, args...)...)
			s.check("simulate.schema.json", "simulate "+strings.Join(args, " "), out)
			if slices.Contains(args, "--trace") && !bytes.Contains(out, []byte(`"trace": [`)) {
				t.Errorf("simulate --json --trace dropped the trace: %s", clip(out))
			}
		}
	})
	conformanceSkipped := false
	t.Run("conformance", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"conformance", "--json", "--runs", "2"}, &out, &errb)
		switch code {
		case cli.Unavailable:
			conformanceSkipped = true
			t.Skipf("node or Qwen Code 0.24.4 unavailable (simulations/conformance/install.sh): %s", errb.String())
		case cli.OK, cli.CheckFailed:
		default:
			t.Fatalf("conformance: exit %d: %s", code, errb.String())
		}
		s.check("conformance.schema.json", "conformance --runs 2", out.Bytes())
	})

	t.Run("harness", func(t *testing.T) { harnessSchemas(t, s) })
	t.Run("reconcile --all", func(t *testing.T) { reconcileAllSchemas(t, s) })

	// Every schema, and every branch of replay's oneOf, matched a real
	// document (the conformance schema only when it could run). The input
	// report's schema is matched through reconcile's and status's. Not
	// checked when -run picked some cases only.
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		return
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	var unmatched []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".schema.json") || name == "input.schema.json" {
			continue
		}
		if name == "conformance.schema.json" && conformanceSkipped {
			continue
		}
		if s.matched[name] == 0 {
			unmatched = append(unmatched, name)
		}
	}
	for _, b := range []string{"step", "decisionLine", "crashRow", "batch"} {
		if s.matched["replay#"+b] == 0 {
			unmatched = append(unmatched, "replay.schema.json#/$defs/"+b)
		}
	}
	sort.Strings(unmatched)
	if len(unmatched) > 0 {
		t.Errorf("schemas no real output matched: %v", unmatched)
	}
}

// branch counts which of replay's oneOf branches a line matched.
func (s *schemaSet) branch(what string, line []byte, names ...string) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return
	}
	for _, n := range names {
		if s.schema("replay.schema.json#/$defs/"+n).Validate(v) == nil {
			s.matched["replay#"+n]++
			return
		}
	}
	s.t.Errorf("%s: a line matches no branch of replay.schema.json: %s", what, clip(line))
}
