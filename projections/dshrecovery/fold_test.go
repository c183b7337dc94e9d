package dshrecovery_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/projections/dshrecovery"
)

func fold(t *testing.T, lines ...string) (*dshrecovery.Fold, error) {
	t.Helper()
	var f dshrecovery.Fold
	for _, l := range lines {
		recs, err := v0.ParseLine(nil, []byte(l))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := f.Apply(r); err != nil {
				return &f, err
			}
		}
	}
	return &f, f.Err()
}

const start = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`

// What the package's load refuses, the fold refuses (dsh-session-persistence
// 0.1.0-rc.8 coordinator checks); what it accepts, the fold accepts.
func TestFoldRefusesWhatLoadRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		line string
		want error // nil: accepted
	}{
		"unknown type":           {`{"type":"x/y","seq":1,"time":1,"data":{}}`, v0.ErrUnsupportedVersion},
		"unknown but ignorable":  {`{"type":"x/y","seq":1,"time":1,"data":{},"ignorable":true}`, nil},
		"ignorable false":        {`{"type":"x/y","seq":1,"time":1,"data":{},"ignorable":false}`, events.ErrCorrupt},
		"foreign envelope key":   {`{"type":"todo/write","seq":1,"time":1,"data":{},"extra":1}`, events.ErrCorrupt},
		"fractional time":        {`{"type":"todo/write","seq":1,"time":1.5,"data":{}}`, events.ErrCorrupt},
		"no data":                {`{"type":"todo/write","seq":1,"time":1}`, events.ErrCorrupt},
		"legacy delta":           {`{"type":"request/header-delta","seq":1,"time":1,"data":{}}`, events.ErrCorrupt},
		"header without model":   {`{"type":"request/header","seq":1,"time":1,"data":{"header":{"config":{"provider":"p"}},"reason":"initial"}}`, events.ErrCorrupt},
		"fallback header":        {`{"type":"request/header","seq":1,"time":1,"data":{"header":{"config":{"provider":"p","model":"m"}},"reason":"fallback"}}`, events.ErrCorrupt},
		"user message no id":     {`{"type":"user/message","seq":1,"time":1,"data":{"role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`, events.ErrCorrupt},
		"legacy user message":    {`{"type":"user/message","seq":1,"time":1,"data":{"content":[],"source":{"kind":"user"}}}`, nil},
		"assistant wrong source": {`{"type":"assistant/message","seq":1,"time":1,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"user"}}}}`, events.ErrCorrupt},
		"tool result mismatched": {`{"type":"tool/result","seq":1,"time":1,"data":{"turn":1,"step":1,"message":{"id":"r","role":"user","content":[{"type":"tool-result","toolCallId":"b","content":[]}],"source":{"kind":"tool","callId":"a"}}}}`, events.ErrCorrupt},
		"malformed turn/end":     {`{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed","x":1}}}`, events.ErrCorrupt},
		"legacy disposed":        {`{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"disposed"}}}`, nil},
		"steering upgraded":      {`{"type":"steering/message","seq":1,"time":1,"data":{"turn":1,"content":[],"source":{"kind":"user"}}}`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := fold(t, start, tc.line)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestClosersFailClosed(t *testing.T) {
	f, err := fold(t, `{"type":"turn/start","seq":0,"time":1,"data":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Closers(); !errors.Is(err, events.ErrCorrupt) || !strings.Contains(err.Error(), "no integer turn") {
		t.Fatalf("a turn/start without turn: %v", err)
	}
	f, _ = fold(t, start, `{"type":"assistant/message","seq":1,"time":1,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"tool-call","id":7}],"source":{"kind":"model","provider":"p","model":"m"}}}}`)
	if _, err := f.Closers(); !errors.Is(err, events.ErrCorrupt) {
		t.Fatalf("a non-string call id: %v", err)
	}
	// A request repeated by id keeps its place and forgets its recorded call.
	f, _ = fold(t, start,
		`{"type":"assistant/message","seq":1,"time":1,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"tool-call","id":"c"},{"type":"tool-call","id":"d"}],"source":{"kind":"model","provider":"p","model":"m"}}}}`,
		`{"type":"tool/call","seq":2,"time":1,"data":{"turn":1,"step":1,"callId":"c"}}`,
		`{"type":"assistant/message","seq":3,"time":2,"data":{"turn":1,"step":2,"message":{"id":"b","role":"assistant","content":[{"type":"tool-call","id":"c"}],"source":{"kind":"model","provider":"p","model":"m"}}}}`)
	cl, err := f.Closers()
	if err != nil || len(cl) != 3 || !strings.Contains(string(cl[0].Line), `"callId":"c"`) || !strings.Contains(string(cl[0].Line), "TOOL_NOT_STARTED") || !strings.Contains(string(cl[0].Line), `"step":2`) {
		t.Fatalf("%v %v", err, cl)
	}
}

// The scanner reuses its buffers: what the fold keeps must not alias them.
func TestFoldKeepsNoAlias(t *testing.T) {
	var f dshrecovery.Fold
	buf := []byte(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":4}}{"type":"step/start","seq":1,"time":2,"data":{"turn":4,"step":2}}`)
	for _, line := range [][]byte{buf[:56], buf[56:]} {
		recs, err := v0.ParseLine(nil, line)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Apply(recs[0]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range buf {
		buf[i] = 'x'
	}
	cl, err := f.Closers()
	if err != nil || len(cl) != 2 || string(cl[1].Line) != `{"type":"turn/end","seq":3,"time":2,"data":{"turn":4,"reason":{"kind":"interrupted"}}}` || !strings.Contains(string(cl[0].Line), `"step":2`) {
		t.Fatalf("%v %v", err, cl)
	}
}
