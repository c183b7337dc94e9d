package apihistory_test

import (
	"bytes"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
)

// FuzzFold feeds whatever the transcript codec accepts from arbitrary bytes
// into the fold: it must never panic, and the bounded fold must stay a
// faithful suffix of the unbounded one on every decodable input.
func FuzzFold(f *testing.F) {
	for _, s := range []string{
		`{"uuid":"u1","type":"user","provenance":"real_user","promptId":"p1","daemonPromptId":"d1","message":{"role":"user","parts":[{"text":"/help"}]}}
{"uuid":"s1","type":"system","subtype":"slash_command","systemPayload":{"phase":"result","rawCommand":"/help","outputHistoryItems":[{"type":"assistant"}]}}`,
		`{"uuid":"a1","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"g1","name":"update_goal"}}]}}
{"uuid":"r1","type":"tool_result","goalContext":{"goalId":"G","revision":1,"turnId":"T"},"message":{"role":"user","parts":[{"functionResponse":{"id":"g1","name":"update_goal"}}]}}
{"uuid":"e1","type":"system","subtype":"goal_turn_end","goalContext":{"goalId":"G","revision":1,"turnId":"T"},"systemPayload":{"toolCallId":"g1"}}
{"uuid":"m1","type":"user","subtype":"mid_turn_user_message","message":{"role":"user","parts":[{"text":"also"}]}}`,
		`{"uuid":"c1","type":"system","subtype":"chat_compression","systemPayload":{"compressedHistory":[{"role":"user","parts":[{"text":"<task-notification>x</task-notification>"}]}],"completedToolCallIds":["x"]}}
{"uuid":"n1","type":"user","subtype":"notification","provenance":"system","message":{"role":"user","parts":[{"text":"<task-notification>y</task-notification>","thought":true}]}}
{"uuid":"t1","type":"system","subtype":"turn_result","systemPayload":{"promptId":"d1","state":"cancelled","cancelledAt":5,"endedAt":6}}`,
	} {
		f.Add([]byte(s), uint8(2), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, keep uint8, strip bool) {
		var evs []events.Event
		for ev, err := range events.Decode(bytes.NewReader(data), qwen.Codec{}, events.Options{}) {
			if err == nil {
				evs = append(evs, ev)
			}
		}
		full, err := apihistory.Build(evs, apihistory.Options{StripThoughts: strip})
		if err != nil {
			t.Fatal(err)
		}
		k := int(keep%8) + 1
		b := apihistory.New(apihistory.Options{StripThoughts: strip, Keep: k})
		for _, ev := range evs {
			if err := b.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
		if d := boundedDiff(full, b.Result(), k); d != "" {
			t.Fatal(d)
		}
	})
}

func TestAddRejectsForeignBodies(t *testing.T) {
	f := apihistory.New(apihistory.Options{})
	err := f.Add(events.Event{Pos: events.Position{Line: 3, Offset: 7}})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("apihistory: line 3, offset 7")) {
		t.Fatalf("got %v", err)
	}
	var typed *qwen.Record
	if err := f.Add(events.Event{Body: typed}); err == nil {
		t.Fatal("a nil record was accepted")
	}
	if r := f.Result(); r.Total != 0 || r.Records != 0 {
		t.Fatalf("rejected events changed the fold: %+v", r)
	}
}
