package codex_test

import (
	"bytes"
	"encoding/json"
	"errors"
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
		if _, _, ok := accepts([]byte(s)); ok {
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
