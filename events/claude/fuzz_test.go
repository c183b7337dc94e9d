package claude_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
)

func seeds(f *testing.F) {
	for _, s := range []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","promptId":"p1","origin":{"kind":"human"}}`,
		`{"parentUuid":"u1","type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":"tool_use"},"uuid":"a1"}`,
		`{"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok","is_error":true}]},"uuid":"r1"}`,
		`{"parentUuid":"r1","type":"system","subtype":"turn_duration","durationMs":1,"uuid":"d1"}`,
		`{"parentUuid":"a1","type":"system","subtype":"stop_hook_summary","hookCount":1,"hookErrors":[],"hookAdditionalContext":["x",{}],"preventedContinuation":false,"uuid":"h1"}`,
		`{"type":"system","subtype":"stop_hook_summary","hookErrors":["e"],"hookErrors":[],"hookAdditionalContext":[1],"hookAdditionalContext":null,"uuid":"h2"}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"uuid":"i1"}`,
		`{"type":"summary","leafUuid":"x"}{"type":"user"}`,
		"\x00\x00{\"type\":\"user\"}",
		`{"type":"user","message":{"content":"\ud800\u00e9\"\\"}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","parentUuid":null,"origin":{"kind":"hook"},"origin":{},"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","id":"t2","name":"Bash"}],"stop_reason":"tool_use"},"message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","stop_reason":null}}`,
	} {
		f.Add([]byte(s + "\n" + s))
	}
}

// FuzzDecode: no input panics the codec, the mapper or the decider; every
// error is positioned and classified; and a line decodes exactly when
// encoding/json reads it as an object with a string type, with the same
// identity fields (go test -run='^$' -fuzz=FuzzDecode -fuzztime=60s ./events/claude).
func FuzzDecode(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkLine(t, line)
		}
		// The fused line read decodes exactly what framing each line
		// first does.
		turntest.SameFused(t, claude.Harness(), data)
		for _, err := range events.Decode(bytes.NewReader(data), claude.Codec{}, events.Options{}) {
			if err == nil {
				continue
			}
			var e *events.Error
			if !errors.As(err, &e) || !(errors.Is(err, events.ErrCorrupt) || errors.Is(err, events.ErrTornTail) || errors.Is(err, events.ErrLineTooLong)) {
				t.Fatalf("unclassified error %v", err)
			}
		}
		if _, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(data), claude.Harness()), turnverdict.Options{WriterStopped: true}); err != nil {
			t.Fatal(err)
		}
		_ = turntest.Acts(data, claude.Harness())
	})
}

func checkLine(t *testing.T, line []byte) {
	evs, err := claude.Codec{}.DecodeLine(nil, events.Line{Bytes: line, Terminated: true})
	var m map[string]json.RawMessage
	var typ string
	want := false
	if strings.TrimSpace(string(line)) == "" || !json.Valid(line) {
	} else if json.Unmarshal(line, &m) == nil && m != nil {
		want = json.Unmarshal(m["type"], &typ) == nil && m["type"] != nil && m["type"][0] == '"'
	}
	blank := len(bytes.Trim(line, " \t\r\n")) == 0
	if blank {
		if err != nil || len(evs) != 0 {
			t.Fatalf("blank line: %v %v", evs, err)
		}
		return
	}
	if want != (err == nil) {
		t.Fatalf("%q: codec error %v, encoding/json accepts: %v", line, err, want)
	}
	if err != nil {
		return
	}
	r := evs[0].Body.(*claude.Record)
	if r.Type != typ {
		t.Fatalf("%q: type %q, encoding/json %q", line, r.Type, typ)
	}
	var uuid string
	if json.Unmarshal(m["uuid"], &uuid) == nil && r.UUID != uuid {
		t.Fatalf("%q: uuid %q, encoding/json %q", line, r.UUID, uuid)
	}
	// The Stop hooks summary's counts decide whether it ends a turn.
	var errs, ctx []json.RawMessage
	if m["hookErrors"] != nil && json.Unmarshal(m["hookErrors"], &errs) == nil && errs != nil {
		if !r.HasHookErrors || r.HookErrors != len(errs) {
			t.Fatalf("%q: hookErrors %v %d, encoding/json %d", line, r.HasHookErrors, r.HookErrors, len(errs))
		}
	} else if r.HasHookErrors {
		t.Fatalf("%q: hookErrors read from a value that is not an array", line)
	}
	if m["hookAdditionalContext"] != nil && json.Unmarshal(m["hookAdditionalContext"], &ctx) == nil && r.HookContexts != len(ctx) {
		t.Fatalf("%q: hookAdditionalContext %d, encoding/json %d", line, r.HookContexts, len(ctx))
	}
	// The whole record is what JSON.parse's reading gives: decoded from the
	// line written back with each repeated key's last value only (and keys
	// sorted, strings re-escaped), the codec yields the same record. Lines
	// whose strings are not valid UTF-8 or hold a lone surrogate are left out:
	// encoding/json replaces those with U+FFFD where the codec keeps them.
	if !utf8.Valid(line) || bytes.Contains(bytes.ToLower(line), []byte(`\ud`)) {
		return
	}
	canon := canonicalLine(t, line)
	cevs, err := claude.Codec{}.DecodeLine(nil, events.Line{Bytes: canon, Terminated: true})
	if err != nil {
		t.Fatalf("%q: canonical form %q does not decode: %v", line, canon, err)
	}
	if diff := cmp.Diff(cevs[0].Body, evs[0].Body); diff != "" {
		t.Fatalf("%q: record differs from its canonical form %q (-canonical +line):\n%s", line, canon, diff)
	}
}

// canonicalLine is line as JSON.parse reads it, written back: every object's
// repeated keys reduced to the last value, numbers kept as written.
func canonicalLine(t *testing.T, line []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: encoding/json: %v", line, err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
