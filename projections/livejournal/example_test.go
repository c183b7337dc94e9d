package livejournal_test

import (
	"fmt"

	"github.com/tailproof/tailproof/projections/livejournal"
)

// A three-event journal: a reader joining after five events sees a marker
// owned by the active prompt and the three newest events.
func Example() {
	j, err := livejournal.New(livejournal.Limits{MaxEvents: 3, MaxBytes: livejournal.DefaultMaxBytes})
	if err != nil {
		panic(err)
	}
	j.Append(&livejournal.Event{ID: 1, Type: livejournal.TypeUserMessage, PromptID: "p1"})
	for id := int64(2); id <= 5; id++ {
		j.Append(&livejournal.Event{ID: id, Type: "agent_message_chunk", PromptID: "p1"})
	}
	j.Append(&livejournal.Event{Type: livejournal.TypeSlowClientWarning}) // never journaled

	snap := j.Snapshot("p1")
	m, err := livejournal.MarkerFromEvent(snap[0])
	if err != nil {
		panic(err)
	}
	owner, _ := m.Owner(snap[1:])
	fmt.Println(m.Status())
	fmt.Println("owner:", owner)
	for _, ev := range snap[1:] {
		fmt.Println(ev.Describe())
	}
	o, _ := j.Append(&livejournal.Event{ID: 6, Type: livejournal.TypeTurnComplete, PromptID: "p1"})
	fmt.Println(o, len(j.Snapshot("")))
	// Output:
	// Live turn truncated (prompt p1): the live journal kept the newest 3 events and discarded 2 older events (limits 3 events, 8388608 bytes). The complete turn will be restored from the full transcript after the turn ends.
	// owner: p1
	// #3 agent_message_chunk prompt=p1
	// #4 agent_message_chunk prompt=p1
	// #5 agent_message_chunk prompt=p1
	// turn_ended 0
}

// Decoding a marker from the wire validates every field, optional ones too.
func ExampleDecodeMarker() {
	_, err := livejournal.DecodeMarker([]byte(`{"v":1,"type":"history_truncated","data":{"reason":"replay_window_exceeded","scope":"live_journal","truncatedEvents":2,"retainedEvents":3,"maxBytes":8388608,"maxEvents":0,"fullTranscriptAvailable":true}}`))
	fmt.Println(err)
	m, _ := livejournal.ReplayWindowMarker(40, 12, 4<<20, 3, "")
	fmt.Println(m.Status())
	// Output:
	// livejournal: history_truncated: maxEvents must be positive, got 0: malformed
	// Replay history truncated: the replay window kept the newest 12 events and discarded 40 older events from 3 turns (limit 4194304 bytes). Older history is available from the full transcript.
}
