package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// A v0 session in the published shapes: one finished turn, then a turn
// whose tool call was recorded without a result.
var v0Batches = []string{
	`{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}
{"type":"turn/end","seq":1,"time":11,"data":{"turn":1,"reason":{"kind":"completed"}}}
`,
	`{"type":"turn/start","seq":2,"time":20,"data":{"turn":2}}
{"type":"step/start","seq":3,"time":21,"data":{"turn":2,"step":1}}
{"type":"text-chunks","seq0":4,"time0":22,"data":{"turn":2,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}
{"type":"assistant/message","seq":7,"time":25,"data":{"turn":2,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}
`,
	`{"type":"tool/call","seq":8,"time":26,"data":{"turn":2,"step":1,"callId":"c1","name":"bash","arguments":"{}"}}
`,
}

func writeV0Session(t *testing.T, enc v0.Encoding) string {
	cwd := "/w"
	w, err := dshlog.NewV0Writer(vfs.OS, t.TempDir(), v0.Header{ID: "s1", CreatedAt: 1, Cwd: []byte(`"` + cwd + `"`)}, enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range v0Batches {
		if err := w.Append([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	return w.Path()
}

func TestReplayDSHV0(t *testing.T) {
	for _, enc := range []v0.Encoding{v0.Zstd, v0.Raw} {
		path := writeV0Session(t, enc)
		before, _ := os.ReadFile(path)
		code, out, errs := replayCLI(t, "replay", "--dsh", path, "--crash-at", "all")
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", enc, code, errs)
		}
		// 9 events: balanced before any, interrupted inside turn 1, balanced
		// after its turn/end, interrupted through turn 2.
		if !strings.Contains(out, "10 crash points: interrupted 8 balanced 2") {
			t.Fatalf("%v:\n%s", enc, out)
		}
		code, out, _ = replayCLI(t, "replay", "--dsh", path, "--crash-at", "9")
		if code != 0 || !strings.Contains(out, "TOOL_OUTCOME_UNKNOWN") || !strings.Contains(out, "awaiting c1 (tool/call #8)") {
			t.Fatalf("%v: exit %d\n%s", enc, code, out)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatalf("%v: replay changed the user's log", enc)
		}
	}
}

func TestDSHRecoverV0(t *testing.T) {
	path := writeV0Session(t, v0.Zstd)
	out, _, code := dshRun(t, "dsh", "recover", "--file", path, "--json")
	var rep dshRecoverReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if rep.Format != "v0-zstd" || rep.Events != 12 || strings.Join(rep.Closers, ",") != "tool/result,step/end,turn/end" || rep.TruncatedBytes != 0 {
		t.Fatalf("%+v", rep)
	}
	out, _, code = dshRun(t, "dsh", "recover", "--file", path)
	if code != 0 || !strings.Contains(out, "nothing to repair") {
		t.Fatalf("second recover: exit %d\n%s", code, out)
	}
}
