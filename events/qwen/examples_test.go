package qwen

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/events"
)

// The bundled example sessions (examples/qwen, used by the README) must stay
// clean transcripts whose chains read as described there.
func TestBundledExamples(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "qwen", "projects", "-work-demo", "chats")
	cases := map[string][]string{
		// Prompt 5c9e2b7a… is in_flight in the ledger, but its turn ran to
		// the final answer; a background notification trails it.
		"b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d": {
			"qwen.user", "qwen.assistant", "qwen.tool_result", "qwen.assistant", "qwen.system/turn_result",
			"qwen.user", "qwen.assistant", "qwen.tool_result", "qwen.assistant", "qwen.user/notification",
		},
		// Interrupted mid tool call: the chain ends on the model's call.
		"4a9d8c2e-6b1f-4e7a-8c3d-5f6e7a8b9c0d": {"qwen.user", "qwen.assistant"},
	}
	for id, want := range cases {
		path := filepath.Join(dir, id+".jsonl")
		open := func() (io.ReadCloser, error) { return os.Open(path) }
		c, err := LoadChain(open, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Degraded() != "" || len(c.BadLines) > 0 || len(c.Diagnostics) > 0 || c.SessionID != id || c.FirstCwd != "/work/demo" {
			t.Fatalf("%s: degraded=%q bad=%v diags=%v session=%s cwd=%s", id, c.Degraded(), c.BadLines, c.Diagnostics, c.SessionID, c.FirstCwd)
		}
		var kinds []string
		var last *Record
		if err := c.Walk(open, func(i int, ev events.Event) error {
			kinds = append(kinds, string(ev.Kind))
			last = ev.Body.(*Record)
			if ev.Provenance == events.ProvenanceAbsent || !ev.Time.OK {
				t.Errorf("%s: %s lacks provenance or time", id, ev.Describe())
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, kinds); d != "" {
			t.Fatalf("%s chain (-want +got):\n%s", id, d)
		}
		if strings.HasPrefix(id, "4a9d") {
			parts := last.Message.Parts
			if p := parts[len(parts)-1]; p.Kind != PartFunctionCall || p.ID != "call_9d1f5b3e7a" {
				t.Fatalf("interrupted example does not end on the tool call: %+v", p)
			}
		}
	}
}
