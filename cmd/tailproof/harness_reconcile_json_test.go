package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events/ledger"
)

// TestReconcileJSONStreamed: `reconcile --harness … --json` streams its
// appended array, and the document is byte for byte what MarshalDoc makes
// of the whole struct — also when the file's path itself spells the
// `"appended":[]` the splice looks for, and when the run appends nothing.
func TestReconcileJSONStreamed(t *testing.T) {
	b, err := os.ReadFile("../../testdata/turns/codex-crashed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), `"appended":[] <&>`)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rollout.jsonl")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{2, 0} { // the first run stamps both turns, the second nothing
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"reconcile", "--harness", "codex", "--file", file, "--now", "1796029200000", "--json"}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		var doc harnessReconcileJSON
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatalf("%v:\n%s", err, stdout.String())
		}
		if len(doc.Appended) != want || doc.File != file {
			t.Fatalf("appended %d, want %d; file %q", len(doc.Appended), want, doc.File)
		}
		for _, a := range doc.Appended {
			r, err := ledger.Decode([]byte(a.Line))
			if err != nil || r.PromptID != a.Turn || string(r.Terminal) != a.Terminal || r.Code != a.Code || r.At != a.At {
				t.Fatalf("element %+v does not match its line (%v)", a, err)
			}
		}
		whole, err := cli.MarshalDoc(doc, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.TrimSuffix(stdout.Bytes(), []byte("\n")); !bytes.Equal(got, whole) {
			t.Fatalf("streamed:\n%s\nwhole:\n%s", got, whole)
		}
	}
}
