package qwenserve

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tailproof/tailproof/simulations"
)

// TestRealDaemonErrorTurn has the published daemon write an error turn (the
// mock refuses the prompt's model request with a 400, which the client does
// not retry) and checks what the simulator's 0.24.4 model writes for one:
// the turn_result's shape is among the model's shapes, and its error code and
// the ledger terminal's code are ones the model writes (ADR 0026: the bridge
// receives the agent's error as a RequestError, a plain Error as -32603). It
// skips without node or the package and under -short.
func TestRealDaemonErrorTurn(t *testing.T) {
	node, pkg, ctx := realDaemonSetup(t, "30 s to a minute")
	mock, err := NewMock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	dir := t.TempDir()
	env := Env{Home: filepath.Join(dir, "home"), Workspace: filepath.Join(dir, "ws"), Package: pkg, Node: node, ModelURL: mock.URL()}
	if err := env.Prepare(); err != nil {
		t.Fatal(err)
	}
	mock.Script("[tpq-1]", []Step{{Fail: 400}})
	d, err := StartDaemon(ctx, env, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Kill)
	sid, err := d.CreateSession(ctx, env.Workspace)
	if err != nil {
		t.Fatalf("%v: %s", err, d.stderrTail(400))
	}
	pid, err := d.Prompt(ctx, sid, "[tpq-1] fail this request")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{env: env, sid: sid}
	var terminal map[string]any
	for terminal == nil && ctx.Err() == nil {
		b, _ := os.ReadFile(r.ledgerPath())
		for l := range bytes.Lines(b) {
			var rec map[string]any
			if json.Unmarshal(l, &rec) == nil && rec["promptId"] == pid && rec["terminal"] != nil {
				terminal = rec
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if terminal == nil {
		t.Fatalf("no terminal for %s: %s", pid, d.stderrTail(600))
	}
	time.Sleep(time.Second) // the turn_result is written fire-and-forget
	b, err := os.ReadFile(r.transcriptPath())
	if err != nil {
		t.Fatal(err)
	}
	var tr map[string]any
	var trShape string
	for l := range bytes.Lines(b) {
		var rec struct {
			Subtype string         `json:"subtype"`
			Payload map[string]any `json:"systemPayload"`
		}
		if json.Unmarshal(l, &rec) == nil && rec.Subtype == "turn_result" && rec.Payload["promptId"] == pid {
			tr = rec.Payload
			s, err := simulations.ShapeOf(bytes.TrimSpace(l))
			if err != nil {
				t.Fatal(err)
			}
			trShape = s.String()
		}
	}
	t.Logf("ledger terminal: %v", terminal)
	t.Logf("turn_result: %v", tr)
	if tr == nil || tr["state"] != "error" {
		t.Fatalf("no error turn_result for %s (terminal %v): %s", pid, terminal, b)
	}
	ms, err := simulations.ModelShapes(ctx, 1, 600, "identity")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ms, func(s simulations.RecordShape) bool { return s.String() == trShape }) {
		t.Errorf("the model writes no turn_result of the real error shape %s", trShape)
	}
	code, _ := tr["error"].(map[string]any)["code"].(string)
	if code != "" && code != "-32603" && code != "429" {
		t.Errorf("turn_result error code %q: the model writes none, -32603 or 429", code)
	}
	if terminal["terminal"] != "error" || terminal["code"] != "-32603" {
		t.Errorf("ledger terminal %v: the model writes error/-32603 for this error", terminal)
	}
}
