package livejournal

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events"
)

func TestCodecThroughDecode(t *testing.T) {
	in := `{"v":1,"id":1,"type":"user_message_chunk","promptId":"p1","data":{"text":"go"}}
{"v":1,"type":"history_truncated","promptId":"p1","data":{"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":1,"retainedEvents":1,"maxBytes":9,"fullTranscriptAvailable":true}}
{"v":2,"id":2,"type":"x"}

{"v":1,"id":3,"type":"turn_complete","promptId":"p1"}
{"v":1,"id":4,"type":"agent_mess`
	var got []string
	var errs []error
	for ev, err := range events.Decode(strings.NewReader(in), Codec{}, events.Options{}) {
		if err != nil {
			errs = append(errs, err)
			got = append(got, "error: "+err.Error())
			continue
		}
		got = append(got, ev.Describe())
	}
	want := []string{
		`live_journal:1 daemon.user_message_chunk uuid=1 #1 user_message_chunk prompt=p1 data={"text":"go"}`,
		`live_journal:2 daemon.history_truncated history_truncated prompt=p1 data={"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":1,"retainedEvents":1,"maxBytes":9,"fullTranscriptAvailable":true}`,
		`error: events: live_journal line 3, offset 280: corrupt record: livejournal: event: v must be 1: malformed`,
		`live_journal:5 daemon.turn_complete uuid=3 #3 turn_complete prompt=p1`,
		`error: events: live_journal line 6, offset 361: torn tail: final fragment has no newline: livejournal: event: malformed: unexpected end of JSON input`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decode (-want +got):\n%s", diff)
	}
	if !errors.Is(errs[0], events.ErrCorrupt) || !errors.Is(errs[0], ErrMalformed) || !errors.Is(errs[1], events.ErrTornTail) {
		t.Fatalf("classification: %v", errs)
	}
}
