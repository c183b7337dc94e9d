package dsh_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
)

func decodeAll(input string) string {
	var out strings.Builder
	for ev, err := range events.Decode(strings.NewReader(input), dsh.Codec{}, events.Options{RequireNewline: true}) {
		if err != nil {
			kind := "error"
			switch {
			case errors.Is(err, events.ErrTornTail):
				kind = "torn"
			case errors.Is(err, events.ErrCorrupt):
				kind = "corrupt"
			}
			fmt.Fprintf(&out, "%s: %v\n", kind, err)
			continue
		}
		fmt.Fprintln(&out, ev.Describe())
	}
	return out.String()
}

// reencode parses each line and writes it back from its typed payload: the
// bytes must equal the input when the writer used dsh's key order.
func reencode(input string) string {
	var out strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(input, "\n"), "\n") {
		var got []byte
		if i == 0 && strings.Contains(line, `"type":"session"`) {
			h, err := dsh.ParseHeader([]byte(line))
			if err != nil {
				fmt.Fprintf(&out, "line %d: %v\n", i+1, err)
				continue
			}
			got = dsh.AppendHeader(nil, h)
		} else {
			rec, err := dsh.ParseRecord([]byte(line))
			if err != nil {
				fmt.Fprintf(&out, "line %d: %v\n", i+1, err)
				continue
			}
			p, err := dsh.DecodePayload(rec.Type, rec.Data)
			if err != nil {
				fmt.Fprintf(&out, "line %d: %v\n", i+1, err)
				continue
			}
			got = dsh.AppendRecord(nil, dsh.NewRecord(rec.Seq, rec.Time, p))
		}
		if string(got) == line {
			fmt.Fprintf(&out, "line %d: identical\n", i+1)
		} else {
			fmt.Fprintf(&out, "line %d: differs\n  in:  %s\n  out: %s\n", i+1, line, got)
		}
	}
	return out.String()
}

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			input := d.Input
			if d.HasArg("no-final-newline") {
				input = strings.TrimSuffix(input, "\n")
			} else {
				input += "\n"
			}
			switch d.Cmd {
			case "decode":
				return decodeAll(input)
			case "reencode":
				return reencode(input)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

// The crash example shipped for the README decodes to 26 events and a torn tail.
func TestCrashedExample(t *testing.T) {
	b, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var torn *events.Error
	for ev, err := range events.Decode(bytes.NewReader(b), dsh.Codec{}, events.Options{RequireNewline: true}) {
		if err != nil {
			if !errors.As(err, &torn) || !errors.Is(err, events.ErrTornTail) {
				t.Fatalf("unexpected error %v", err)
			}
			continue
		}
		if ev.Kind != dsh.HeaderKind {
			n++
		}
	}
	if n != 26 || torn == nil || torn.Pos.Offset != 3626 {
		t.Fatalf("events=%d torn=%v, want 26 events and a torn tail at offset 3626", n, torn)
	}
	got := reencode(string(b[:3626]))
	if strings.Contains(got, "differs") || strings.Contains(got, "line 1:") && !strings.Contains(got, "line 1: identical") {
		t.Fatalf("re-encoding the example changed bytes:\n%s", got)
	}
}

func TestProvenance(t *testing.T) {
	user := dsh.Source{Kind: "user"}
	plugin := dsh.Source{Kind: "plugin", Plugin: "bg"}
	agent := dsh.Source{Kind: "agent", AgentID: "a1"}
	cases := []struct {
		p    dsh.Payload
		want events.Provenance
		o    events.Origin
	}{
		{&dsh.UserMessage{Source: user}, events.ProvenanceRealUser, events.OriginStructural},
		{&dsh.UserMessage{Source: plugin}, events.ProvenanceSystem, events.OriginStructural},
		{&dsh.UserMessage{Source: agent}, events.ProvenanceSystem, events.OriginStructural},
		{&dsh.SteeringMessage{Source: user}, events.ProvenanceRealUser, events.OriginStructural},
		{&dsh.ContextMessage{Source: user}, events.ProvenanceSystem, events.OriginStructural},
		{&dsh.TurnStart{Trigger: dsh.Trigger{Kind: "injection", Source: &plugin}}, events.ProvenanceSystem, events.OriginStructural},
		{&dsh.TurnStart{Trigger: dsh.Trigger{Kind: "message", Source: &user}}, events.ProvenanceAbsent, events.OriginNone},
		{&dsh.AssistantMessage{}, events.ProvenanceAssistant, events.OriginStructural},
		{&dsh.ToolResult{}, events.ProvenanceToolResult, events.OriginStructural},
		{&dsh.TurnEnd{}, events.ProvenanceAbsent, events.OriginNone},
		{&dsh.Generic{Type: "x/y"}, events.ProvenanceAbsent, events.OriginNone},
	}
	for _, c := range cases {
		p, o := dsh.ProvenanceOf(c.p)
		if p != c.want || o != c.o {
			t.Errorf("%T %s: got %v/%v, want %v/%v", c.p, c.p.Describe(), p, o, c.want, c.o)
		}
	}
}

func TestCanonical(t *testing.T) {
	for _, bad := range []string{``, `undefined`, `{"extra":undefined}`, `NaN`, `{"a":Infinity}`, `{"a":1`} {
		_, err := dsh.Record{Type: "user/message", Seq: 0, Time: 1, Data: []byte(bad)}.Canonical()
		if !errors.Is(err, dsh.ErrNotSerializable) || !strings.Contains(err.Error(), "user/message") {
			t.Errorf("data %q: got %v, want ErrNotSerializable naming user/message", bad, err)
		}
	}
	r, err := dsh.Record{Type: "x", Data: []byte("{\n  \"a\" : [1, null, true]\n}")}.Canonical()
	if err != nil || string(r.Data) != `{"a":[1,null,true]}` {
		t.Fatalf("compact: %q %v", r.Data, err)
	}
}

func TestEncoderEscapesLikeJSONStringify(t *testing.T) {
	rec := dsh.NewRecord(3, 9, &dsh.UserMessage{
		Content: []dsh.Block{{Type: "text", Text: "<a&b>\u2028\x01\"\\\t"}},
		Source:  dsh.Source{Kind: "user"},
	})
	got := string(dsh.AppendRecord(nil, rec))
	want := `{"type":"user/message","seq":3,"time":9,"data":{"content":[{"type":"text","text":"<a&b>` + "\u2028" + `\u0001\"\\\t"}],"source":{"kind":"user"}}}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
	cwd, parent := "/proj", "p0"
	h := dsh.AppendHeader(nil, dsh.Header{Version: 1, ID: "s", CreatedAt: 1781000000000, Cwd: &cwd, ParentSession: &parent})
	if string(h) != `{"type":"session","version":1,"id":"s","createdAt":1781000000000,"cwd":"/proj","parentSession":"p0"}` {
		t.Fatal(string(h))
	}
}

func FuzzDecodeLine(f *testing.F) {
	b, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		f.Add(l, false)
	}
	f.Add([]byte(`{"type":"session","version":1,"id":"x","createdAt":1}`), true)
	f.Add([]byte(`{"type":"turn/end","seq":1e2,"time":5.0,"data":{"turn":1,"reason":{"kind":"error","message":"m","code":"c"}}}`), false)
	f.Add([]byte(`{"type":"x/new","seq":0,"time":0,"data":null}`), false)
	f.Add([]byte(`null`), false)
	f.Add([]byte(`[1]`), true)
	f.Fuzz(func(t *testing.T, line []byte, header bool) {
		pos := events.Position{Line: 2}
		if header {
			pos.Line = 1
		}
		evs, err := dsh.Codec{}.DecodeLine(nil, events.Line{Bytes: line, Pos: pos, Terminated: true, Size: int64(len(line))})
		if err != nil {
			if len(evs) != 0 {
				t.Fatalf("events with an error: %v", evs)
			}
			return
		}
		for _, ev := range evs {
			_ = ev.Describe()
			body, ok := ev.Body.(*dsh.EventBody)
			if !ok {
				continue
			}
			// A decoded record written back and read again is the same record.
			canon, err := body.Record.Canonical()
			if err != nil {
				t.Fatalf("decoded record not canonical: %v", err)
			}
			again, err := dsh.ParseRecord(dsh.AppendRecord(nil, canon))
			if err != nil {
				t.Fatalf("re-read: %v", err)
			}
			if again.Type != canon.Type || again.Seq != canon.Seq || again.Time != canon.Time || !bytes.Equal(again.Data, canon.Data) {
				t.Fatalf("round trip changed the record: %+v vs %+v", canon, again)
			}
			// The typed payload re-encodes to data that decodes to the same description.
			re := body.Payload.AppendJSON(nil)
			p2, err := dsh.DecodePayload(body.Type, re)
			if err != nil {
				t.Fatalf("payload re-encode %s does not decode: %v", re, err)
			}
			if p2.Describe() != body.Payload.Describe() {
				t.Fatalf("payload describe changed: %q vs %q", p2.Describe(), body.Payload.Describe())
			}
		}
	})
}
