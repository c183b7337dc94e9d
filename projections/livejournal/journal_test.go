package livejournal

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestJournalBoundsProperty drives random turns through random bounds and
// checks, after every append, the invariants the daemon relies on: both
// bounds hold (the byte bound yields only to keep one event), the retained
// events are exactly the newest journaled ones of the current turn, in
// order and by reference, and truncated+retained counts every journaled
// event of the turn.
func TestJournalBoundsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := Limits{MaxEvents: rapid.IntRange(1, 8).Draw(t, "maxEvents"), MaxBytes: rapid.IntRange(1, 400).Draw(t, "maxBytes")}
		j, err := New(l)
		if err != nil {
			t.Fatal(err)
		}
		var turn []*Event // every journaled event of the current turn
		types := []string{"agent_message_chunk", "tool_call", TypeUserMessage, TypeSlowClientWarning, TypeStreamError, TypeTurnComplete, TypeTurnError}
		n := rapid.IntRange(0, 60).Draw(t, "events")
		for i := 1; i <= n; i++ {
			ev := &Event{
				ID:       int64(i),
				Type:     rapid.SampledFrom(types).Draw(t, "type"),
				PromptID: rapid.SampledFrom([]string{"", "p1", "p2"}).Draw(t, "prompt"),
				Data:     []byte(fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", rapid.IntRange(0, 200).Draw(t, "size")))),
			}
			o, err := j.Append(ev)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case IsTransient(ev.Type):
				if o != Transient {
					t.Fatalf("%s: outcome %s", ev.Describe(), o)
				}
			case IsTerminal(ev.Type):
				if o != TurnEnded || j.Len() != 0 || j.Bytes() != 0 || j.Truncated() != 0 {
					t.Fatalf("terminal did not reset: %s len=%d", o, j.Len())
				}
				turn = nil
			default:
				turn = append(turn, ev)
			}
			if j.Len() > l.MaxEvents {
				t.Fatalf("len %d > maxEvents %d", j.Len(), l.MaxEvents)
			}
			if j.Bytes() > l.MaxBytes && j.Len() > 1 {
				t.Fatalf("bytes %d > maxBytes %d with %d events", j.Bytes(), l.MaxBytes, j.Len())
			}
			if len(turn) > 0 && j.Len() == 0 {
				t.Fatal("the journal dropped every event of an unfinished turn")
			}
			if j.Truncated()+j.Len() != len(turn) {
				t.Fatalf("truncated %d + retained %d != journaled %d", j.Truncated(), j.Len(), len(turn))
			}
			snap := j.Snapshot("p1")
			retained := snap
			if j.Truncated() > 0 {
				m, err := MarkerFromEvent(snap[0])
				if err != nil {
					t.Fatalf("journal built an invalid marker: %v", err)
				}
				if m.TruncatedEvents != j.Truncated() || m.RetainedEvents != j.Len() || m.PromptID != "p1" {
					t.Fatalf("marker %s disagrees with the journal", m.Describe())
				}
				retained = snap[1:]
			}
			want := turn[len(turn)-j.Len():]
			for k := range want {
				if retained[k] != want[k] {
					t.Fatalf("retained[%d] is not the journaled event by reference", k)
				}
			}
		}
	})
}

func TestAppendRejectsBadEvents(t *testing.T) {
	j, err := New(DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*Event{nil, {}, {Type: "x", ID: -1}, {Type: "x", Data: []byte("{")}} {
		if _, err := j.Append(ev); !errors.Is(err, ErrMalformed) {
			t.Errorf("Append(%s) = %v, want ErrMalformed", ev.Describe(), err)
		}
	}
	if j.Len() != 0 {
		t.Fatalf("a bad event was journaled")
	}
}

func TestReplayWindowMarker(t *testing.T) {
	m, err := ReplayWindowMarker(40, 12, 4<<20, 3, "r2")
	if err != nil {
		t.Fatal(err)
	}
	line, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded","truncatedEvents":40,"retainedEvents":12,"maxBytes":4194304,"truncatedTurns":3,"recordId":"r2","fullTranscriptAvailable":true}}`
	if diff := cmp.Diff(want, string(line)); diff != "" {
		t.Fatalf("wire form (-want +got):\n%s", diff)
	}
	if _, err := ReplayWindowMarker(1, 1, 0, 0, ""); !errors.Is(err, ErrMalformed) {
		t.Fatalf("zero maxBytes accepted: %v", err)
	}
}

func TestLoadLiveMarker(t *testing.T) {
	j, _ := New(Limits{MaxEvents: 1, MaxBytes: DefaultMaxBytes})
	for i := int64(1); i <= 3; i++ {
		if _, err := j.Append(&Event{ID: i, Type: "agent_message_chunk", PromptID: "p1"}); err != nil {
			t.Fatal(err)
		}
	}
	l := &Load{LiveJournal: j.Snapshot("")}
	m, retained, ok, err := l.LiveMarker()
	if err != nil || !ok {
		t.Fatalf("LiveMarker: ok=%v err=%v", ok, err)
	}
	if owner, err := m.Owner(retained); err != nil || owner != "p1" {
		t.Fatalf("owner %q, %v", owner, err)
	}
	bad := &Load{LiveJournal: []*Event{{Type: TypeHistoryTruncated, Data: []byte(`{"reason":"x"}`)}}}
	if _, _, ok, err := bad.LiveMarker(); !ok || !errors.Is(err, ErrMalformed) {
		t.Fatalf("a malformed marker must be reported, not treated as absent: ok=%v err=%v", ok, err)
	}
	if _, _, ok, err := (&Load{}).LiveMarker(); ok || err != nil {
		t.Fatalf("empty load: ok=%v err=%v", ok, err)
	}
}

// The byte bound counts exactly the wire bytes a reader receives.
func TestEncodedSizeIsWireLength(t *testing.T) {
	for _, ev := range []*Event{
		{Type: "x"},
		{ID: 12, Type: "agent_message_chunk", PromptID: "p\"1\n", RecordID: "r\x00", Data: []byte(`{"text":"é"}`)},
		{Type: "t\xff", Data: []byte(`null`)},
	} {
		n, _ := ev.encodedSize(nil)
		if want := len(ev.AppendJSON(nil)); n != want {
			t.Errorf("%s: encodedSize %d, wire %d", ev.Describe(), n, want)
		}
	}
}
