package livejournal

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var markerSeeds = []string{
	`{"v":1,"type":"history_truncated","promptId":"p1","data":{"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":7,"retainedEvents":3,"maxBytes":8388608,"maxEvents":3,"recordId":"r9","fullTranscriptAvailable":true}}`,
	`{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded","truncatedEvents":40,"retainedEvents":12,"maxBytes":4194304,"truncatedTurns":3,"fullTranscriptAvailable":true}}`,
	`{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":1e2,"retainedEvents":1.0,"maxBytes":1,"fullTranscriptAvailable":false}}`,
	`{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":"1","retainedEvents":1,"maxBytes":1,"fullTranscriptAvailable":true}}`,
	`{"v":1,"type":"history_truncated","promptId":null,"data":{}}`,
	`{"v":1,"type":"history_truncated","data":null}`,
	`{"v":1,"id":-1,"type":"x"}`,
	`{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":9007199254740993,"retainedEvents":-0,"maxBytes":1,"fullTranscriptAvailable":true}}`,
	`{"v":1,"type":"history_truncated","data":{"reason":"\u0000\ud800","truncatedEvents":1}}`,
	`[]`, `null`, `{`, ``, `{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded"}}{}`,
}

// FuzzDecodeMarker: any input either decodes to a marker that re-encodes
// to a line decoding to the same marker, or fails with ErrMalformed. It never
// panics.
func FuzzDecodeMarker(f *testing.F) {
	for _, s := range markerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := DecodeMarker(line)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		_ = m.Status()
		_, _ = m.Owner(nil)
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("decoded marker does not re-encode: %v", err)
		}
		back, err := DecodeMarker(out)
		if err != nil {
			t.Fatalf("re-encoded marker %s does not decode: %v", out, err)
		}
		if diff := cmp.Diff(m, back); diff != "" {
			t.Fatalf("round trip changed the marker (-first +second):\n%s", diff)
		}
	})
}

// FuzzDecodeEvent: the envelope decoder under the marker decoder.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range markerSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"v":1,"id":5,"type":"agent_message_chunk","promptId":"p\"1","recordId":"r","data":{"text":"a\nb"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeEvent(line)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		_ = ev.Describe()
		out, err := ev.MarshalJSON()
		if err != nil {
			t.Fatalf("decoded event does not re-encode: %v", err)
		}
		back, err := DecodeEvent(out)
		if err != nil {
			t.Fatalf("re-encoded event %s does not decode: %v", out, err)
		}
		if diff := cmp.Diff(ev, back); diff != "" {
			t.Fatalf("round trip changed the event (-first +second):\n%s", diff)
		}
	})
}
