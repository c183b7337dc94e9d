package codex_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
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
// timestamp and type strings, an ordinal that is null or a non-negative
// integer, a payload object with a string type for the known items, the
// turn boundaries' turn_id and a user_message's message strings,
// nesting within serde_json's 128) says so, to the members the oracle reads
// (the identities, role, phase, a person's text). encoding/json's maps keep
// the last of duplicate keys, whole, as the serde_json Value Codex's loader
// reads each line into first does.
// (go test -run='^$' -fuzz=FuzzDecode -fuzztime=60s -parallel 1 ./events/codex).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":"2026-11-30T09:00:01.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}`,
		`{"timestamp":"2026-11-30T09:00:01.003Z","type":"event_msg","payload":{"type":"user_message","message":"hi","kind":"plain"}}`,
		`{"timestamp":"2026-11-30T09:00:02.000Z","ordinal":3,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}`,
		`{"timestamp":"2026-11-30T09:00:03.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>"}]}}`,
		`{"timestamp":"x","type":"event_msg","payload":{"type":"task_compl{"timestamp":"y","type":"compacted","payload":{}}`,
		`{"timestamp":"x","type":"world_state","payload":[1]}`,
		`{"timestamp":"x","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"},"payload":{"turn_id":"t1"},"ordinal":2}`,
		`{"timestamp":"x","type":"event_msg","payload":{"type":"user_message","message":"a","message":null,"type":"agent_message","phase":"final_answer","phase":1}}`,
		`{"timestamp":"x","type":"response_item","payload":{"type":"message","role":"user","content":[{"text":"a","text":"b"}],"role":null}}`,
	} {
		f.Add([]byte(s + "\n" + s))
	}
	for _, s := range utf8Lines() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkLine(t, line)
		}
		// The fused line read decodes exactly what framing each line
		// first does.
		turntest.SameFused(t, codex.Harness(), data)
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

// expected is what the oracle says a line decodes to.
type expected struct {
	typ, ptyp, ts                           string
	ordinal                                 int64
	hasOrdinal                              bool
	known                                   bool
	id, turn, call, name, role, phase, text string
	hasText                                 bool
}

// str is the string value of raw, or "" for any other value or none.
func str(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func accepts(line []byte) (e expected, ok bool) {
	if !utf8.Valid(line) || !json.Valid(line) || depth(line) > 128 {
		return e, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || m == nil {
		return e, false
	}
	if m["timestamp"] == nil || m["timestamp"][0] != '"' {
		return e, false
	}
	e.ts = str(m["timestamp"])
	if m["type"] == nil || m["type"][0] != '"' {
		return e, false
	}
	e.typ = str(m["type"])
	if o := m["ordinal"]; o != nil && string(o) != "null" {
		n, err := strconv.ParseInt(string(o), 10, 64)
		if err != nil || n < 0 {
			return e, false // not a u64 (or past what the codec holds)
		}
		e.ordinal, e.hasOrdinal = n, true
	}
	switch e.typ {
	case "session_meta", "response_item", "compacted", "turn_context", "event_msg":
	default:
		return e, true
	}
	e.known = true
	var p map[string]json.RawMessage
	if m["payload"] == nil || m["payload"][0] != '{' || json.Unmarshal(m["payload"], &p) != nil {
		return e, false
	}
	if e.typ == "response_item" || e.typ == "event_msg" {
		if p["type"] == nil || p["type"][0] != '"' {
			return e, false
		}
	}
	e.ptyp = str(p["type"])
	if e.typ == "event_msg" {
		isStr := func(k string) bool { return len(p[k]) > 0 && p[k][0] == '"' }
		switch e.ptyp {
		case "task_started", "turn_started", "task_complete", "turn_complete":
			if !isStr("turn_id") {
				return e, false
			}
		case "user_message":
			if !isStr("message") {
				return e, false
			}
		}
	}
	e.id, e.turn, e.call, e.name = str(p["id"]), str(p["turn_id"]), str(p["call_id"]), str(p["name"])
	e.role, e.phase = str(p["role"]), str(p["phase"])
	if e.typ == "event_msg" && (e.ptyp == "user_message" || e.ptyp == "injected_message") {
		e.hasText = len(p["message"]) > 0 && p["message"][0] == '"'
		e.text = str(p["message"])
	}
	if e.typ == "response_item" && e.ptyp == "message" && e.role != "assistant" && p["content"] != nil {
		e.hasText = true
		// The text members of the content's object elements, concatenated;
		// anything else (a content that is not an array, an element that is
		// not an object) contributes nothing.
		var elems []json.RawMessage
		_ = json.Unmarshal(p["content"], &elems)
		for _, el := range elems {
			var obj map[string]json.RawMessage
			if json.Unmarshal(el, &obj) == nil {
				e.text += str(obj["text"])
			}
		}
	}
	return e, true
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
	e, ok := accepts(line)
	if ok != (err == nil) {
		t.Fatalf("%q: codec error %v, oracle accepts: %v", line, err, ok)
	}
	if err != nil {
		return
	}
	r := evs[0].Body.(*codex.Record)
	if r.Type != e.typ || r.PayloadType != e.ptyp || r.Timestamp != e.ts || r.HasOrdinal != e.hasOrdinal || r.Ordinal != e.ordinal && e.hasOrdinal {
		t.Fatalf("%q: %s/%s ts %q ordinal %v %d, oracle %+v", line, r.Type, r.PayloadType, r.Timestamp, r.HasOrdinal, r.Ordinal, e)
	}
	if !e.known {
		return
	}
	got := expected{typ: e.typ, ptyp: e.ptyp, ts: e.ts, ordinal: e.ordinal, hasOrdinal: e.hasOrdinal, known: true,
		id: r.ID, turn: r.TurnID, call: r.CallID, name: r.Name, role: r.Role, phase: r.Phase, text: r.Text, hasText: r.HasText}
	if got != e {
		t.Fatalf("%q:\n got %+v\nwant %+v", line, got, e)
	}
}

// utf8Lines puts invalid and valid non-ASCII bytes inside, beside and
// between the long strings whose UTF-8 the codec checks while skipping
// them (utf8.go), and in what lies between: in a key, a short value, a
// nested array, the fifth long string (past the ones recorded).
func utf8Lines() []string {
	long := strings.Repeat(`out\tput \"x\" `, 8)
	head := `{"timestamp":"2026-11-30T09:00:01.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1"`
	var out []string
	for _, bad := range []string{"\xff", "\xe2\x82", "\xc3\xa9", "\xe2\x80\xa6", "\xed\xa0\x80", "\xf0\x9f\x98\x80"} {
		out = append(out,
			head+`,"output":"`+long+bad+long+`"}}`,
			head+`,"output":"`+bad+long+`"}}`,
			head+`,"output":"`+long+bad+`"}}`,
			head+`,"output":"`+long+`","x`+bad+`":1}}`,
			head+`,"output":"`+long+`","y":"`+bad+`"}}`,
			head+`,"output":"`+long+`","z":["`+long+bad+`"]}}`,
			head+`,"a":"`+long+`","b":"`+long+`","c":"`+long+`","d":"`+long+`","e":"`+long+bad+`"}}`,
			head+`,"output":"`+long+`"}`+bad+`}`,
			head+`,"output":"`+long+bad+`}}`,
		)
	}
	return out
}

// TestUTF8Checked holds the codec to the whole-line UTF-8 rule on the
// lines above, every fuzz run or not.
func TestUTF8Checked(t *testing.T) {
	valid, invalid := 0, 0
	for _, s := range utf8Lines() {
		checkLine(t, []byte(s))
		if _, ok := accepts([]byte(s)); ok {
			valid++
		} else if json.Valid([]byte(strings.ToValidUTF8(s, "?"))) {
			invalid++ // refused for its UTF-8 alone
		}
		if !utf8.ValidString(s) {
			_, err := codex.Codec{}.DecodeLine(nil, events.Line{Bytes: []byte(s), Terminated: true})
			if err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
				t.Fatalf("%q: %v, want the invalid UTF-8 error first", s, err)
			}
		}
	}
	if valid < 20 || invalid < 20 {
		t.Fatalf("%d lines valid, %d refused for their UTF-8 alone: the cases no longer test the check", valid, invalid)
	}
}
