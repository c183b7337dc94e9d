package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestHarnessSchemas runs every harness command's --json on real-shaped
// sessions and checks each document against its schema under
// docs/schemas/ (the plain 2020-12 subset they use: type, properties,
// required, additionalProperties, items, enum, $defs/$ref), so a field
// added to an output without its schema, or a schema naming a field the
// output lacks, fails here.
func TestHarnessSchemas(t *testing.T) {
	dir := t.TempDir()
	copyIn := func(src, name string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	codexFile := copyIn("../../testdata/turns/codex-crashed.jsonl", "codex.jsonl")
	claudeFile := copyIn("../../testdata/turns/claude-session.jsonl", "claude.jsonl")
	dshFile := copyIn("../../examples/dsh/crashed-session.jsonl", "dsh.jsonl")
	cases := []struct {
		schema string
		args   []string
	}{
		{"harness-status", []string{"status", "--harness", "codex", "--file", codexFile, "--json"}},
		{"harness-status", []string{"status", "--harness", "claude", "--file", claudeFile, "--json", "--writer-stopped"}},
		{"harness-status", []string{"status", "--harness", "dsh", "--file", dshFile, "--json"}},
		{"harness-replay", []string{"replay", "--harness", "claude", "--file", claudeFile, "--json"}},
		{"harness-replay", []string{"replay", "--harness", "codex", "--file", codexFile, "--json", "--writer-stopped"}},
		{"harness-replay", []string{"replay", "--harness", "dsh", "--file", dshFile, "--json"}},
		{"harness-status", []string{"status", "--harness", "dsh", "--file", "../../examples/dsh/v0/--home-me-proj--/sess-01/session.jsonl.zstd", "--json"}},
		{"harness-reconcile", []string{"reconcile", "--harness", "codex", "--file", codexFile, "--json", "--trace", "--now", "1796029200000"}},
		{"harness-reconcile", []string{"reconcile", "--harness", "claude", "--file", claudeFile, "--json", "--dry-run", "--now", "1796029200000"}},
		// With the sidecar written, status carries the stamp.
		{"harness-status", []string{"status", "--harness", "codex", "--file", codexFile, "--json", "--writer-stopped"}},
		{"harness-repair", []string{"repair", "--harness", "codex", "--file", codexFile, "--json"}},
		{"harness-repair", []string{"repair", "--harness", "claude", "--file", claudeFile, "--json"}},
		{"harness-repair-dsh", []string{"repair", "--harness", "dsh", "--file", dshFile, "--json"}},
		{"harness-simulate", []string{"simulate", "--harness", "claude", "--runs", "2", "--json"}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(context.Background(), c.args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb.String())
		}
		raw, err := os.ReadFile(filepath.Join("../../docs/schemas", c.schema+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		seen[c.schema] = true
		dec := json.NewDecoder(&out)
		for n := 0; dec.More(); n++ {
			var doc any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("%v: document %d: %v", c.args, n, err)
			}
			if err := validate(schema, schema, doc, "$"); err != nil {
				t.Errorf("%v: document %d against %s: %v", c.args, n, c.schema, err)
			}
		}
	}
	files, _ := filepath.Glob("../../docs/schemas/harness-*.schema.json")
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".schema.json"); !seen[name] {
			t.Errorf("%s is checked against no output", name)
		}
	}
}

// validate checks v against schema s (root holds $defs). Keywords about
// objects and arrays apply only to instances of that type, as in JSON
// Schema.
func validate(root, s map[string]any, v any, at string) error {
	if r, ok := s["$ref"].(string); ok {
		name, ok := strings.CutPrefix(r, "#/$defs/")
		def, _ := root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok || def == nil {
			return fmt.Errorf("%s: unresolved $ref %q", at, r)
		}
		if err := validate(root, def, v, at); err != nil {
			return err
		}
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		if !slices.Contains(types, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(types, "number")) {
			return fmt.Errorf("%s: %s, want %v", at, jsonType(v), types)
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return reflect.DeepEqual(x, v) }) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, e)
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := v[r]; !ok {
				return fmt.Errorf("%s: missing required %q", at, r)
			}
		}
		for k, x := range v {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: %q is not in the schema", at, k)
				}
				continue
			}
			if err := validate(root, ps, x, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range v {
				if err := validate(root, items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func asStrings(v any) []string {
	var out []string
	xs, _ := v.([]any)
	for _, x := range xs {
		out = append(out, x.(string))
	}
	return out
}
