package qwen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/events"
	"pgregory.net/rapid"
)

// Property: on any transcript shape — random parents (branches, gaps,
// cycles, parents after children), duplicate-uuid fragments, artifact
// records, glued lines — the two streaming passes produce exactly what the
// in-memory ChainOf produces from the codec's events.
func TestChainStreamingEqualsInMemory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 30).Draw(t, "n")
		ids := rapid.IntRange(1, n+2).Draw(t, "ids")
		var lines []string
		for i := 0; i < n; i++ {
			uuid := fmt.Sprintf("u%d", rapid.IntRange(0, ids-1).Draw(t, "uuid"))
			parent := "null"
			switch p := rapid.IntRange(-2, ids).Draw(t, "parent"); {
			case p == -2:
				parent = `""`
			case p >= 0:
				parent = fmt.Sprintf(`"u%d"`, p)
			}
			typ := rapid.SampledFrom([]string{"user", "assistant", "tool_result", "system"}).Draw(t, "type")
			sub := ""
			if typ == "system" {
				sub = `,"subtype":"` + rapid.SampledFrom([]string{"chat_compression", "session_artifact_event", "managed_session_event_v1", "rewind"}).Draw(t, "sub") + `"`
			}
			ts := fmt.Sprintf("2026-01-01T00:00:%02d.000Z", rapid.IntRange(0, 59).Draw(t, "ts"))
			rec := fmt.Sprintf(`{"uuid":%q,"parentUuid":%s,"sessionId":"S","timestamp":%q,"type":%q%s,"message":{"role":"user","parts":[{"text":"r%d"}]}}`,
				uuid, parent, ts, typ, sub, i)
			if len(lines) > 0 && rapid.IntRange(0, 5).Draw(t, "glue") == 0 {
				lines[len(lines)-1] += rec
			} else {
				lines = append(lines, rec)
			}
		}
		file := []byte(strings.Join(lines, "\n") + "\n")
		open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
		c, err := LoadChain(open, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var walked []string
		if err := c.Walk(open, func(i int, ev events.Event) error {
			if i != len(walked) {
				t.Fatalf("index %d, want %d", i, len(walked))
			}
			walked = append(walked, ev.Describe())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var evs []events.Event
		for ev, err := range events.Decode(bytes.NewReader(file), Codec{}, events.Options{}) {
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		mem, mc, err := ChainOf(evs)
		if err != nil {
			t.Fatal(err)
		}
		var memd []string
		for _, ev := range mem {
			memd = append(memd, ev.Describe())
		}
		if d := cmp.Diff(memd, walked); d != "" {
			t.Fatalf("walk differs from ChainOf (-mem +walk):\n%s\n%s", d, file)
		}
		if c.Len != len(walked) || c.Cycle != mc.Cycle {
			t.Fatalf("len %d walked %d, cycle %q vs %q", c.Len, len(walked), c.Cycle, mc.Cycle)
		}
		if d := cmp.Diff(mc.Gaps, c.Gaps); d != "" {
			t.Fatalf("gaps differ:\n%s", d)
		}
		if d := cmp.Diff(codes(mc.Diagnostics), codes(c.Diagnostics)); d != "" {
			t.Fatalf("diagnostics differ:\n%s", d)
		}
	})
}

func codes(ds []Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code+" "+d.RecordID)
	}
	return out
}

// A forced hash collision: pass 1 sees one uuid where there are two; Walk
// must catch it with the real strings and fail closed.
func TestWalkDetectsHashCollision(t *testing.T) {
	file := []byte(`{"uuid":"u1","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"u2","parentUuid":"u1","sessionId":"S","type":"assistant"}
`)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
	c, err := LoadChain(open, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Simulate what a colliding parent hash would have produced: the chain
	// believes u2's parent is a record whose real uuid differs.
	tampered := bytes.Replace(file, []byte(`"uuid":"u1"`), []byte(`"uuid":"v1"`), 1)
	open2 := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tampered)), nil }
	err = c.Walk(open2, func(int, events.Event) error { return nil })
	if !errors.Is(err, ErrHashCollision) {
		t.Fatalf("Walk = %v, want ErrHashCollision", err)
	}
	if c.Degraded() == "" {
		t.Fatal("collision did not degrade the chain")
	}
}

// The callback's error stops the walk and is returned as is.
func TestWalkStopsOnCallbackError(t *testing.T) {
	file := []byte(`{"uuid":"u1","parentUuid":null,"sessionId":"S","type":"user"}
{"uuid":"u2","parentUuid":"u1","sessionId":"S","type":"assistant"}
`)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
	c, _ := LoadChain(open, LoadOptions{})
	stop := errors.New("enough")
	n := 0
	if err := c.Walk(open, func(int, events.Event) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("err=%v n=%d", err, n)
	}
}

// open's error is returned wrapped, for the caller to classify.
func TestLoadChainOpenError(t *testing.T) {
	missing := errors.New("no such file")
	_, err := LoadChain(func() (io.ReadCloser, error) { return nil, missing }, LoadOptions{})
	if !errors.Is(err, missing) || !strings.HasPrefix(err.Error(), "qwen: ") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzLoadChain: any file goes through both passes without panicking, and
// the streaming chain equals the in-memory one built from the codec's events.
func FuzzLoadChain(f *testing.F) {
	f.Add([]byte(strings.Join(fuzzSeeds, "\n")))
	f.Add([]byte(`{"uuid":"a","parentUuid":"c","sessionId":"S","type":"user"}
{"uuid":"b","parentUuid":"a","sessionId":"S","type":"user"}{"uuid":"a","parentUuid":null,"sessionId":"S","type":"assistant"}
{"uuid":"c","parentUuid":"b","sessionId":"S","type":"user"}`))
	// A rewound branch: off-chain records (read light by Walk) glued to and
	// interleaved with chain records.
	f.Add([]byte(`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user","message":{"role":"user","parts":[{"text":"one"}]}}
{"uuid":"x","parentUuid":"a","sessionId":"S","type":"assistant","message":{"role":"model","parts":[{"text":"rewound"}]}}{"uuid":"b","parentUuid":"a","sessionId":"S","type":"assistant","message":{"role":"model","parts":[{"text":"kept"}]}}
{"uuid":"y","parentUuid":"x","sessionId":"S","type":"user"}
{"uuid":"c","parentUuid":"b","sessionId":"S","type":"system","subtype":"turn_result","systemPayload":{"promptId":"p","state":"completed"}}`))
	f.Fuzz(func(t *testing.T, file []byte) { checkChainOf(t, file) })
}

// Property: LoadChain then Walk is ChainOf, on every transcript shape
// (branches, gaps, cycles, fragments, artifact and invalid records).
func TestLoadChainEqualsChainOf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkChainOf(t, transcriptGen().Draw(t, "file")) })
}

// checkChainOf fails unless the streaming chain of file equals the
// in-memory one built from the codec's events.
func checkChainOf(t interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, file []byte) {
	t.Helper()
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
	memd, mc, memErr := memChain(file)
	c, err := LoadChain(open, LoadOptions{})
	if (err != nil) != (memErr != nil) {
		t.Fatalf("LoadChain err %v, ChainOf err %v", err, memErr)
	}
	if err != nil {
		return
	}
	var walked []string
	if err := c.Walk(open, func(i int, ev events.Event) error {
		walked = append(walked, ev.Describe())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(memd, walked); d != "" {
		t.Fatalf("walk differs from ChainOf (-mem +walk):\n%s", d)
	}
	if d := cmp.Diff(mc.Gaps, c.Gaps); d != "" || mc.Cycle != c.Cycle {
		t.Fatalf("gaps/cycle differ: %s %q %q", d, mc.Cycle, c.Cycle)
	}
}

// memChain is ChainOf over the codec's events of file: the chain's events
// described, and its summary.
func memChain(file []byte) ([]string, *Chain, error) {
	var evs []events.Event
	for ev, err := range events.Decode(bytes.NewReader(file), Codec{}, events.Options{}) {
		if err == nil {
			evs = append(evs, ev)
		}
	}
	mem, mc, err := ChainOf(evs)
	var memd []string
	for _, ev := range mem {
		memd = append(memd, ev.Describe())
	}
	return memd, mc, err
}
