package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
)

// The tailer over Qwen's layout, typed by Source: each transcript line comes
// out as the qwen codec's events with their file positions.
func TestSourceTypesTailedTranscript(t *testing.T) {
	layout := jsonl.NewQwenLayout(t.TempDir(), "/w")
	store := jsonl.NewQwenStore(vfs.OS, layout)
	id := bustest.SessionID(7)
	if err := bustest.Seed(context.Background(), store, id, 2); err != nil {
		t.Fatal(err)
	}
	cfg := bus.QwenTailConfig(layout, events.StreamTranscript)
	cfg.PollInterval = time.Millisecond
	tl := bus.NewTailer(cfg)
	defer tl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := bus.NewSource(tl).Subscribe(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 4 {
		select {
		case d := <-ch:
			if d.Err != nil {
				t.Fatal(d.Err)
			}
			if d.Session != id {
				t.Fatalf("session %q", d.Session)
			}
			for _, e := range d.Events {
				got = append(got, string(e.Kind)+"@"+e.Pos.String()+" "+e.UUID)
			}
			d.Msg.Ack()
		case <-time.After(5 * time.Second):
			t.Fatalf("timeout after %v", got)
		}
	}
	// Offsets are where each line starts in the file the fixture wrote.
	var want []string
	off := 0
	for i, line := range strings.SplitAfter(string(bustest.CompletedTranscript(2)), "\n")[:4] {
		kind, uuid := "qwen.user", fmt.Sprintf("u%d", i/2)
		if i%2 == 1 {
			kind, uuid = "qwen.assistant", fmt.Sprintf("a%d", i/2)
		}
		want = append(want, fmt.Sprintf("%s@line %d, offset %d %s", kind, i+1, off, uuid))
		off += len(line)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestSourceDecodeRefusesBadMessages(t *testing.T) {
	src := &bus.Source{}
	ok := bus.NewRecordMessage("x", events.StreamLedger, "s", events.Position{Line: 1}, bustest.InFlightLedger("p1")[:len(bustest.InFlightLedger("p1"))-1])
	if evs, err := src.Decode(ok); err != nil || len(evs) != 1 || evs[0].Kind != "ledger.in_flight" {
		t.Fatalf("good ledger line: %v %v", evs, err)
	}
	cases := map[string]*message.Message{
		"unknown stream": bus.NewRecordMessage("x", "nope", "s", events.Position{Line: 1}, []byte(`{}`)),
		"bad line no":    withMeta(ok, bus.MetaLine, "0"),
		"bad offset":     withMeta(ok, bus.MetaOffset, "-1"),
		"unknown codec":  withMeta(ok, bus.MetaCodec, "nope"),
		"garbage":        bus.NewRecordMessage("x", events.StreamLedger, "s", events.Position{Line: 1}, []byte(`{"v":`)),
	}
	for name, m := range cases {
		if _, err := src.Decode(m); !errors.Is(err, bus.ErrBadMessage) {
			t.Errorf("%s: err = %v, want ErrBadMessage", name, err)
		}
	}
}

func withMeta(m *message.Message, k, v string) *message.Message {
	c := m.Copy()
	c.Metadata.Set(k, v)
	return c
}

// Whatever a third-party source sends, Decode returns events or an error;
// it never panics.
func FuzzSourceDecode(f *testing.F) {
	f.Add("ledger", "1", "0", "", string(bustest.InFlightLedger("p1")))
	f.Add("transcript", "1", "0", "", string(bustest.CompletedTranscript(1)[:200]))
	f.Add("transcript", "2", "17", "qwen-transcript", `{"uuid":"u","type":"user","message":{"parts":[{"text":"x"}]}}`)
	f.Add("session_log", "1", "0", "", `{"v":1,"session":"s"}`)
	f.Add("session_log", "2", "40", "dsh", `{"type":"turn","seq":1,"time":1,"data":{}}`)
	f.Add("ledger", "x", "-3", "nope", "\x00}{")
	src := &bus.Source{MaxLineBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, stream, line, off, codec, payload string) {
		m := message.NewMessage("f", []byte(payload))
		m.Metadata.Set(bus.MetaStream, stream)
		m.Metadata.Set(bus.MetaLine, line)
		m.Metadata.Set(bus.MetaOffset, off)
		if codec != "" {
			m.Metadata.Set(bus.MetaCodec, codec)
		}
		evs, err := src.Decode(m)
		if err != nil && !errors.Is(err, bus.ErrBadMessage) {
			t.Fatalf("unclassified error %v", err)
		}
		for _, e := range evs {
			_ = e.Describe()
		}
	})
}
