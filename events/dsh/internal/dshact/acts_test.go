package dshact_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tailproof/tailproof/events/dsh"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/turn"
)

// acts reads one log with a harness and returns its prompt and turn-end
// acts as text.
func acts(t *testing.T, log string, h turn.Harness) []string {
	t.Helper()
	var out []string
	for a, err := range turn.Read(bytes.NewReader([]byte(log)), h) {
		if err != nil {
			t.Fatal(err)
		}
		switch a.Kind {
		case turn.KindPrompt, turn.KindTurnStart, turn.KindTurnEnd, turn.KindOutput, turn.KindToolCall:
			out = append(out, fmt.Sprintf("%s turn=%q msg=%q src=%q end=%q reason=%q text=%q steer=%v stop=%q call=%q",
				a.Kind, a.Turn, a.Message, a.Source, a.End, a.Reason, a.Text, a.Steer, a.Stop, a.Call))
		}
	}
	return out
}

var sources = []string{"user", "plugin", "agent", "cron", ""}

var reasons = []string{
	`{"kind":"completed"}`, `{"kind":"max-tokens"}`, `{"kind":"error","message":"boom"}`, `{"kind":"error"}`,
	`{"kind":"disposed"}`, `{"kind":"aborted","reason":"user"}`, `{"kind":"aborted"}`, `{"kind":"interrupted"}`,
	`{"kind":"blocked"}`, `{"kind":"novel"}`,
}

// v1 and v0 map the prompt sources, the turn-end reasons and the turn and
// message ids alike (the shared tables of this package): the same log in
// both formats gives the same acts. The one difference is the published
// format's blocked reason, which v0 reads as interrupted and v1 (whose seed
// format has no such reason) leaves unstated.
func TestV1AndV0MapAlike(t *testing.T) {
	for _, src := range sources {
		for _, reason := range reasons {
			v1 := `{"type":"session","version":1,"id":"s","createdAt":1}` + "\n" +
				`{"type":"turn/start","seq":0,"time":1,"data":{"turn":3,"trigger":{"kind":"message","source":{"kind":"user"}}}}` + "\n" +
				`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"` + src + `"}}}` + "\n" +
				`{"type":"assistant/message","seq":2,"time":3,"data":{"turn":3,"step":2,"content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}]}}` + "\n" +
				`{"type":"turn/end","seq":3,"time":4,"data":{"turn":3,"reason":` + reason + `}}` + "\n"
			v0log := `{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}` + "\n" +
				`{"type":"turn/start","seq":0,"time":1,"data":{"turn":3}}` + "\n" +
				`{"type":"user/message","seq":1,"time":2,"data":{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"` + src + `"}}}` + "\n" +
				`{"type":"assistant/message","seq":2,"time":3,"data":{"turn":3,"step":2,"message":{"id":"a","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}],"source":{"kind":"model"}}}}` + "\n" +
				`{"type":"turn/end","seq":3,"time":4,"data":{"turn":3,"reason":` + reason + `}}` + "\n"
			a1, a0 := acts(t, v1, dsh.Harness()), acts(t, v0log, v0.Harness())
			if len(a1) != 5 || len(a0) != 5 {
				t.Fatalf("source %q reason %s: acts\nv1 %q\nv0 %q", src, reason, a1, a0)
			}
			if reason == `{"kind":"blocked"}` {
				want1 := fmt.Sprintf("turn-end turn=%q msg=\"\" src=\"unknown\" end=%q reason=\"blocked\"", "3", turn.EndUnstated)
				want0 := fmt.Sprintf("turn-end turn=%q msg=\"\" src=\"unknown\" end=%q reason=\"blocked\"", "3", turn.EndInterrupted)
				if !bytes.HasPrefix([]byte(a1[4]), []byte(want1)) || !bytes.HasPrefix([]byte(a0[4]), []byte(want0)) {
					t.Fatalf("blocked:\nv1 %s\nv0 %s", a1[4], a0[4])
				}
				a1, a0 = a1[:4], a0[:4]
			}
			for i := range a1 {
				if a1[i] != a0[i] {
					t.Errorf("source %q reason %s, act %d:\nv1 %s\nv0 %s", src, reason, i, a1[i], a0[i])
				}
			}
		}
	}
}
