package codex_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
)

// FuzzDecode: no input panics the codec, the mapper or the decider; every
// error is positioned and classified; and a line decodes exactly when an
// encoding/json reading of Codex's acceptance rules (UTF-8, one object,
// timestamp and type strings, a payload object with a string type for the
// known items, nesting within serde_json's 128) says so
// (go test -run='^$' -fuzz=FuzzDecode -fuzztime=60s ./events/codex).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":"2026-11-30T09:00:01.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}`,
		`{"timestamp":"2026-11-30T09:00:01.003Z","type":"event_msg","payload":{"type":"user_message","message":"hi","kind":"plain"}}`,
		`{"timestamp":"2026-11-30T09:00:02.000Z","ordinal":3,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}`,
		`{"timestamp":"2026-11-30T09:00:03.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>"}]}}`,
		`{"timestamp":"x","type":"event_msg","payload":{"type":"task_compl{"timestamp":"y","type":"compacted","payload":{}}`,
		`{"timestamp":"x","type":"world_state","payload":[1]}`,
	} {
		f.Add([]byte(s + "\n" + s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkLine(t, line)
		}
		for _, err := range events.Decode(bytes.NewReader(data), codex.Codec{}, events.Options{}) {
			if err == nil {
				continue
			}
			var e *events.Error
			if !errors.As(err, &e) || !(errors.Is(err, events.ErrCorrupt) || errors.Is(err, events.ErrTornTail) || errors.Is(err, events.ErrLineTooLong)) {
				t.Fatalf("unclassified error %v", err)
			}
		}
		if _, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(data), codex.Harness()), turnverdict.Options{WriterStopped: true}); err != nil {
			t.Fatal(err)
		}
		_ = turntest.Acts(data, codex.Harness())
	})
}

func depth(b []byte) int {
	d, max, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			d++
			if d > max {
				max = d
			}
		case !inStr && (c == '}' || c == ']'):
			d--
		}
	}
	return max
}

func accepts(line []byte) (typ, ptyp string, ok bool) {
	if !utf8.Valid(line) || !json.Valid(line) || depth(line) > 128 {
		return "", "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || m == nil {
		return "", "", false
	}
	var ts string
	if json.Unmarshal(m["timestamp"], &ts) != nil || m["timestamp"] == nil || m["timestamp"][0] != '"' {
		return "", "", false
	}
	if m["type"] == nil || m["type"][0] != '"' || json.Unmarshal(m["type"], &typ) != nil {
		return "", "", false
	}
	switch typ {
	case "session_meta", "response_item", "compacted", "turn_context", "event_msg":
	default:
		return typ, "", true
	}
	var p map[string]json.RawMessage
	if m["payload"] == nil || m["payload"][0] != '{' || json.Unmarshal(m["payload"], &p) != nil {
		return "", "", false
	}
	if typ == "response_item" || typ == "event_msg" {
		if p["type"] == nil || p["type"][0] != '"' || json.Unmarshal(p["type"], &ptyp) != nil {
			return "", "", false
		}
	}
	return typ, ptyp, true
}

func checkLine(t *testing.T, line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	evs, err := codex.Codec{}.DecodeLine(nil, events.Line{Bytes: line, Terminated: true})
	if len(bytes.Trim(line, " \t\r\n")) == 0 {
		if err != nil || len(evs) != 0 {
			t.Fatalf("blank line: %v %v", evs, err)
		}
		return
	}
	typ, ptyp, ok := accepts(line)
	if ok != (err == nil) {
		t.Fatalf("%q: codec error %v, oracle accepts: %v", line, err, ok)
	}
	if err != nil {
		return
	}
	r := evs[0].Body.(*codex.Record)
	if r.Type != typ || r.PayloadType != ptyp {
		t.Fatalf("%q: %s/%s, oracle %s/%s", line, r.Type, r.PayloadType, typ, ptyp)
	}
}
