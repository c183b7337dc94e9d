package qwen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tailproof/tailproof/events"
	"pgregory.net/rapid"
)

// scanPasses is what checkScan learned about one Scan.
type scanPasses struct {
	opens, restarts int
}

// checkScan runs Scan and LoadChain+Walk over file and fails unless they
// agree exactly: the events visit saw since the last restart against the
// events Walk yields (bodies compared field by field), and every exported
// field of the Chain.
func checkScan(t interface {
	Helper()
	Fatalf(string, ...any)
}, file []byte, opts LoadOptions) scanPasses {
	t.Helper()
	var sp scanPasses
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
	counted := func() (io.ReadCloser, error) { sp.opens++; return open() }

	want, wc, werr := twoPass(open, opts)
	var got []events.Event
	gc, gerr := Scan(counted, opts, func(i int, e events.Event) error {
		if i != len(got) {
			t.Fatalf("visit index %d after %d events", i, len(got))
		}
		got = append(got, e)
		return nil
	}, func() { sp.restarts++; got = got[:0] })
	if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("Scan err %v, LoadChain+Walk err %v\n%s", gerr, werr, file)
	}
	if werr != nil {
		return sp
	}
	if d := cmp.Diff(want, got, eventCmp); d != "" {
		t.Fatalf("Scan's events differ from LoadChain+Walk's (-two-pass +scan):\n%s\n%s", d, file)
	}
	if d := cmp.Diff(wc, gc, chainCmp); d != "" {
		t.Fatalf("Scan's chain differs from LoadChain's (-two-pass +scan):\n%s\n%s", d, file)
	}
	// The Chain Scan returns can be walked again, to the same events.
	var again []events.Event
	if err := gc.Walk(open, func(_ int, e events.Event) error { again = append(again, e); return nil }); err != nil {
		t.Fatalf("Walk of Scan's chain: %v", err)
	}
	if d := cmp.Diff(want, again, eventCmp); d != "" {
		t.Fatalf("Walk of Scan's chain differs (-two-pass +walk):\n%s", d)
	}
	return sp
}

// eventCmp compares events field by field (GoalContext's Equal is the
// goal-turn relation, under which nil equals nothing).
var eventCmp = cmp.Comparer(func(a, b *GoalContext) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
})

// chainCmp compares Chains by their exported fields, bad lines by their
// text and kind.
var chainCmp = cmp.Options{
	cmpopts.IgnoreUnexported(Chain{}),
	cmp.Comparer(func(a, b *events.Error) bool {
		return a.Error() == b.Error() && a.Kind == b.Kind
	}),
}

// twoPass is LoadChain then Walk, collecting the walk.
func twoPass(open Opener, opts LoadOptions) ([]events.Event, *Chain, error) {
	c, err := LoadChain(open, opts)
	if err != nil {
		return nil, nil, err
	}
	var evs []events.Event
	if err := c.Walk(open, func(_ int, e events.Event) error { evs = append(evs, e); return nil }); err != nil {
		return nil, nil, err
	}
	return evs, c, nil
}

// transcriptGen draws transcripts of every shape the chain rules care
// about: linear runs, branches and rewinds (a parent earlier than the
// previous record), gaps (a parent that is never written or written
// later), cycles, fragments (a reused uuid, with the same or another
// parent), roots in the middle, artifact and invalid records, glued,
// corrupt and blank lines, and a torn tail.
func transcriptGen() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		var lines []string
		var uuids []string
		next := 0
		for i := 0; i < n; i++ {
			uuid := fmt.Sprintf("u%d", next)
			parent := "null"
			if len(uuids) > 0 {
				parent = fmt.Sprintf("%q", uuids[len(uuids)-1])
			}
			switch rapid.IntRange(0, 19).Draw(t, "shape") {
			case 0: // a branch back to an earlier record (a rewind)
				if len(uuids) > 0 {
					parent = fmt.Sprintf("%q", rapid.SampledFrom(uuids).Draw(t, "branch"))
				}
			case 1: // a parent not (yet) written: a gap, or a child before its parent
				parent = fmt.Sprintf(`"u%d"`, next+rapid.IntRange(1, 3).Draw(t, "ahead"))
			case 2: // a fragment: an earlier uuid again
				if len(uuids) > 0 {
					uuid = rapid.SampledFrom(uuids).Draw(t, "frag")
				}
			case 3: // a root in the middle
				parent = rapid.SampledFrom([]string{"null", `""`}).Draw(t, "root")
			case 4: // a self-parent or a loop
				parent = fmt.Sprintf("%q", uuid)
			}
			if uuid == fmt.Sprintf("u%d", next) {
				next++
			}
			typ := rapid.SampledFrom([]string{"user", "assistant", "tool_result", "system", "system"}).Draw(t, "type")
			sub := ""
			if typ == "system" {
				sub = `,"subtype":"` + rapid.SampledFrom([]string{"turn_result", "session_artifact_event", "chat_compression", "managed_session_event_v1"}).Draw(t, "sub") + `"`
			}
			session := "S"
			if rapid.IntRange(0, 30).Draw(t, "badid") == 0 {
				session = "" // invalid: skipped by Qwen
			}
			ts := fmt.Sprintf("2026-01-01T00:00:%02d.000Z", rapid.IntRange(0, 59).Draw(t, "ts"))
			rec := fmt.Sprintf(`{"uuid":%q,"parentUuid":%s,"sessionId":%q,"timestamp":%q,"type":%q%s,"message":{"role":"user","parts":[{"text":"r%d \"q\"\\n"},{"functionCall":{"id":"c%d","name":"ls","args":{"a":[1,{"b":null}]}}}]}}`,
				uuid, parent, session, ts, typ, sub, i, i)
			uuids = append(uuids, uuid)
			switch rapid.IntRange(0, 15).Draw(t, "line") {
			case 0:
				if len(lines) > 0 {
					lines[len(lines)-1] += rec // glued `}{`
					continue
				}
			case 1:
				lines = append(lines, `{"uuid":"broken","parentUuid":`) // corrupt
			case 2:
				lines = append(lines, "   ")
			}
			lines = append(lines, rec)
		}
		file := strings.Join(lines, "\n")
		if len(lines) > 0 && rapid.Bool().Draw(t, "newline") {
			file += "\n"
		}
		if rapid.IntRange(0, 4).Draw(t, "torn") == 0 {
			file += `{"uuid":"torn","parentUu`
		}
		return []byte(file)
	})
}

// Property: Scan is LoadChain+Walk, on every transcript shape.
func TestScanEqualsTwoPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkScan(t, transcriptGen().Draw(t, "file"), LoadOptions{})
	})
}

// FuzzScan: on any input Scan agrees with LoadChain+Walk and never panics.
func FuzzScan(f *testing.F) {
	f.Add([]byte(strings.Join(fuzzSeeds, "\n")))
	f.Add([]byte(`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"b","parentUuid":"a","sessionId":"S","type":"user"}{"uuid":"a","parentUuid":null,"sessionId":"S","type":"assistant"}
{"uuid":"c","parentUuid":"b","sessionId":"S","type":"user"}`))
	f.Add([]byte(`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"b","parentUuid":"a","sessionId":"S","type":"user"}
{"uuid":"c","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"d","parentUuid":"c","sessionId":"S","type":"user"}`))
	f.Fuzz(func(t *testing.T, file []byte) {
		checkScan(t, file, LoadOptions{})
		checkScan(t, file, LoadOptions{MaxLineBytes: 64})
	})
}

// A linear transcript is read once; a rewind costs a restart and a walk.
func TestScanPasses(t *testing.T) {
	linear := []byte(`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"b","parentUuid":"a","sessionId":"S","type":"assistant"}
{"uuid":"x","parentUuid":"b","sessionId":"S","type":"system","subtype":"session_artifact_event"}
{"uuid":"c","parentUuid":"b","sessionId":"S","type":"user"}
`)
	if sp := checkScan(t, linear, LoadOptions{}); sp.opens != 1 || sp.restarts != 0 {
		t.Fatalf("linear: %+v, want one pass and no restart", sp)
	}
	rewound := append(append([]byte(nil), linear...), `{"uuid":"d","parentUuid":"a","sessionId":"S","type":"user"}
`...)
	if sp := checkScan(t, rewound, LoadOptions{}); sp.opens != 2 || sp.restarts != 1 {
		t.Fatalf("rewound: %+v, want two passes and a restart", sp)
	}
	// A new root restarts the stream without a second pass.
	reroot := append(append([]byte(nil), linear...), `{"uuid":"r","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"s","parentUuid":"r","sessionId":"S","type":"user"}
`...)
	if sp := checkScan(t, reroot, LoadOptions{}); sp.opens != 1 || sp.restarts != 1 {
		t.Fatalf("new root: %+v, want one pass and a restart", sp)
	}
	// A reused uuid is found at the end of the pass.
	frag := append(append([]byte(nil), linear...), `{"uuid":"a","parentUuid":"c","sessionId":"S","type":"user"}
`...)
	if sp := checkScan(t, frag, LoadOptions{}); sp.restarts != 1 {
		t.Fatalf("fragment: %+v, want a restart", sp)
	}
}

// visit's error stops Scan and is returned as is.
func TestScanStopsOnVisitError(t *testing.T) {
	file := []byte(`{"uuid":"u1","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"u2","parentUuid":"u1","sessionId":"S","type":"assistant"}
`)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
	stop := errors.New("enough")
	n := 0
	if _, err := Scan(open, LoadOptions{}, func(int, events.Event) error { n++; return stop }, nil); err != stop || n != 1 {
		t.Fatalf("err=%v n=%d", err, n)
	}
}
