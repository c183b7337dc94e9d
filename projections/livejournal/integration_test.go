package livejournal_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/livejournal"
)

// daemon is a tiny deterministic daemon: a persisted transcript, a live
// journal of the unfinished turn, a live stream and a load API. It counts
// the loads it serves and the model requests it makes.
type daemon struct {
	session       string
	nextID        int64
	transcript    []*livejournal.Event // persisted; [:completed] are finished turns
	completed     int
	journal       *livejournal.Journal
	active        string
	subs          []*subscription
	degraded      bool
	loads         int
	modelRequests int
}

type subscription struct {
	inbox  []*livejournal.Event
	paused bool
	closed bool
}

func newDaemon(t *testing.T, maxEvents int) *daemon {
	j, err := livejournal.New(livejournal.Limits{MaxEvents: maxEvents, MaxBytes: livejournal.DefaultMaxBytes})
	if err != nil {
		t.Fatal(err)
	}
	return &daemon{session: "s1", journal: j}
}

// prompt admits a prompt: one model request, whose stream the test then
// plays with chunk and finish.
func (d *daemon) prompt(t *testing.T, id string) {
	d.modelRequests++
	d.active = id
	d.emit(t, livejournal.TypeUserMessage, id, `{"text":"do it"}`)
}

func (d *daemon) chunk(t *testing.T, n int) {
	d.emit(t, "agent_message_chunk", d.active, fmt.Sprintf(`{"text":"chunk-%d"}`, n))
}

func (d *daemon) emit(t *testing.T, typ, prompt, data string) *livejournal.Event {
	ev := &livejournal.Event{Type: typ, PromptID: prompt, Data: []byte(data)}
	if !livejournal.IsTransient(typ) {
		d.nextID++
		ev.ID = d.nextID
		d.transcript = append(d.transcript, ev) // the same event, not a copy
	}
	if _, err := d.journal.Append(ev); err != nil {
		t.Fatal(err)
	}
	if livejournal.IsTerminal(typ) {
		d.completed, d.active = len(d.transcript), ""
	}
	for _, s := range d.subs {
		if !s.closed {
			s.inbox = append(s.inbox, ev)
		}
	}
	return ev
}

// load is session/load with memory replay: the compacted replay of finished
// turns from the persisted transcript, and the live journal whose marker is
// owned by the session's active prompt.
func (d *daemon) load(session string) (*livejournal.Load, *subscription, error) {
	d.loads++
	if session != d.session {
		return nil, nil, fmt.Errorf("daemon: no session %q", session)
	}
	s := &subscription{}
	d.subs = append(d.subs, s)
	return &livejournal.Load{
		SessionID:       d.session,
		CompactedReplay: d.transcript[:d.completed:d.completed],
		LiveJournal:     d.journal.Snapshot(d.active),
		LastEventID:     d.nextID,
		ReplayDegraded:  d.degraded,
	}, s, nil
}

// client is a reader that joins mid-turn: it replays a snapshot, follows
// the stream and runs the repair episode's actions.
type client struct {
	d          *daemon
	transcript []*livejournal.Event
	sub        *subscription
	candidate  *subscription
	episode    *machines.RepairEpisode
	notices    []string
	effects    map[int64]int // side effects run per event id
	cursor     int64
}

func open(t *testing.T, d *daemon) (*client, *livejournal.Load) {
	c := &client{d: d, effects: map[int64]int{}}
	load, sub, err := d.load(d.session)
	if err != nil {
		t.Fatal(err)
	}
	c.sub, c.transcript, c.cursor = sub, load.Events(), load.LastEventID
	for _, ev := range c.transcript {
		c.effects[ev.ID]++ // first sight of each event runs its effects
	}
	if _, _, ok, err := load.LiveMarker(); ok && err == nil {
		c.episode = machines.NewRepairEpisode()
		acts, err := c.episode.Begin(context.Background(), machines.RepairCheckpoint{
			SessionID: d.session, Transcript: c.transcript, MarkerIndex: len(load.CompactedReplay), Watermark: load.LastEventID})
		if err != nil {
			t.Fatal(err)
		}
		c.run(t, acts)
	}
	return c, load
}

// pump applies what the stream delivered.
func (c *client) pump(t *testing.T) {
	for !c.sub.paused && len(c.sub.inbox) > 0 {
		ev := c.sub.inbox[0]
		c.sub.inbox = c.sub.inbox[1:]
		if livejournal.IsTransient(ev.Type) || ev.ID <= c.cursor {
			continue
		}
		c.transcript = append(c.transcript, ev)
		c.cursor = ev.ID
		c.effects[ev.ID]++
		if c.episode == nil {
			continue
		}
		if livejournal.IsTerminal(ev.Type) {
			acts, err := c.episode.Terminal(context.Background(), ev, machines.RepairInFlight{})
			if err != nil {
				t.Fatal(err)
			}
			c.run(t, acts)
		} else {
			c.episode.Observe(ev)
		}
	}
}

func (c *client) run(t *testing.T, acts []machines.RepairAction) {
	ctx := context.Background()
	var load *livejournal.Load
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		switch a.Kind {
		case machines.RepairActPauseSubscription:
			c.sub.paused = true
		case machines.RepairActLoad:
			if !a.MemoryReplay {
				t.Fatal("the repair must load with memory replay")
			}
			l, sub, err := c.d.load(a.SessionID)
			var more []machines.RepairAction
			if err != nil {
				more, err = c.episode.LoadFailed(ctx, machines.RepairFailureMissingSession)
			} else {
				load, c.candidate = l, sub
				more, err = c.episode.Loaded(ctx, l)
			}
			if err != nil {
				t.Fatal(err)
			}
			acts = append(acts, more...)
		case machines.RepairActAdoptCandidate:
			c.sub.closed = true
			c.sub, c.candidate, c.cursor = c.candidate, nil, load.LastEventID
		case machines.RepairActDetachCandidate:
			if c.candidate != nil {
				c.candidate.closed = true
				c.candidate = nil
			}
		case machines.RepairActResumeSubscription:
			c.sub.paused = false
		case machines.RepairActReplace:
			c.transcript = a.Replacement.Blocks
			for _, b := range a.Replacement.Blocks {
				if a.Replacement.RepeatsSideEffects(b) {
					c.effects[b.ID]++
				}
			}
		case machines.RepairActNotice:
			c.notices = append(c.notices, a.Notice.Code)
		case machines.RepairActDiscardCheckpoint, machines.RepairActNextEpisode:
		default:
			t.Fatalf("unknown action %s", a.Describe())
		}
	}
}

func describe(evs []*livejournal.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Describe()
	}
	return out
}

// TestIntegrationThreeEventJournal is the end-to-end case: a daemon
// with a three-event journal, a second reader that joins mid-turn and sees
// the marker but not the evicted events, and after the terminal sees the
// complete turn, repaired with exactly one load and no model request.
func TestIntegrationThreeEventJournal(t *testing.T) {
	d := newDaemon(t, 3)
	// A finished turn first, so the compacted replay is not empty.
	d.prompt(t, "p0")
	d.chunk(t, 0)
	d.emit(t, livejournal.TypeTurnComplete, "p0", `{"stopReason":"end_turn"}`)

	d.prompt(t, "p1")
	for i := 0; i < 5; i++ {
		d.chunk(t, i)
	}
	d.emit(t, livejournal.TypeSlowClientWarning, "", `{}`)

	reader, first := open(t, d)
	m, retained, ok, err := first.LiveMarker()
	if err != nil || !ok {
		t.Fatalf("second reader sees no live marker: ok=%v err=%v", ok, err)
	}
	want := livejournal.Marker{PromptID: "p1", Reason: livejournal.ReasonReplayWindowExceeded, Scope: livejournal.ScopeLiveJournal,
		TruncatedEvents: 3, RetainedEvents: 3, MaxBytes: livejournal.DefaultMaxBytes, MaxEvents: 3, FullTranscriptAvailable: true}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Fatalf("marker (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{
		`#7 agent_message_chunk prompt=p1 data={"text":"chunk-2"}`,
		`#8 agent_message_chunk prompt=p1 data={"text":"chunk-3"}`,
		`#9 agent_message_chunk prompt=p1 data={"text":"chunk-4"}`,
	}, describe(retained)); diff != "" {
		t.Fatalf("retained live events (-want +got):\n%s", diff)
	}
	for _, ev := range first.Events() {
		if ev.PromptID == "p1" && (ev.Type == livejournal.TypeUserMessage || string(ev.Data) == `{"text":"chunk-0"}`) {
			t.Fatalf("the second reader sees an evicted event: %s", ev.Describe())
		}
	}
	if got := reader.episode.State(); got != machines.RepairCheckpointed {
		t.Fatalf("episode %s, want checkpointed", got)
	}

	loadsBefore, modelBefore := d.loads, d.modelRequests
	d.chunk(t, 5)
	reader.pump(t)
	if reader.episode.State() != machines.RepairCheckpointed || d.loads != loadsBefore {
		t.Fatalf("the episode acted before the terminal: %s, %d loads", reader.episode.State(), d.loads-loadsBefore)
	}
	d.emit(t, livejournal.TypeTurnComplete, "p1", `{"stopReason":"end_turn"}`)
	reader.pump(t)

	if got := reader.episode.State(); got != machines.RepairCommitted {
		t.Fatalf("episode %s, want committed; trace:\n%v", got, reader.episode.Trace())
	}
	if got := d.loads - loadsBefore; got != 1 {
		t.Errorf("repair loads: %d, want exactly 1", got)
	}
	if got := d.modelRequests - modelBefore; got != 0 {
		t.Errorf("repair model requests: %d, want 0", got)
	}
	if len(reader.notices) != 0 {
		t.Errorf("notices on success: %v", reader.notices)
	}

	// After the terminal the daemon's own snapshot has no live journal and a
	// complete compacted turn whose user input is owned by the marker's prompt.
	after, _, err := d.load(d.session)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.LiveJournal) != 0 {
		t.Fatalf("live journal after the terminal: %v", describe(after.LiveJournal))
	}
	var owner string
	for _, ev := range after.CompactedReplay {
		if ev.Type == livejournal.TypeUserMessage && ev.PromptID != "p0" {
			owner = ev.PromptID
		}
	}
	if owner != m.PromptID {
		t.Fatalf("compacted user input owned by %q, marker by %q", owner, m.PromptID)
	}
	// The repaired reader now shows exactly the persisted transcript, by
	// reference: no block was copied.
	if diff := cmp.Diff(describe(d.transcript), describe(reader.transcript)); diff != "" {
		t.Fatalf("repaired transcript (-persisted +reader):\n%s", diff)
	}
	for i := range d.transcript {
		if d.transcript[i] != reader.transcript[i] {
			t.Fatalf("block %d is a copy, not the daemon's event", i)
		}
	}
	// Rebuilding the suffix did not run any event's side effects twice.
	for id, n := range reader.effects {
		if n > 1 {
			t.Errorf("event #%d ran its side effects %d times", id, n)
		}
	}
	// The adopted stream carries the next turn.
	d.prompt(t, "p2")
	reader.pump(t)
	if last := reader.transcript[len(reader.transcript)-1]; last.PromptID != "p2" {
		t.Fatalf("the adopted subscription did not deliver the next turn: %s", last.Describe())
	}
}

// TestIntegrationDegradedSnapshotKeepsTranscript: the daemon reports a
// degraded replay. The reader keeps what it shows, resumes its old stream
// and shows one notice, still after exactly one load and no model request.
func TestIntegrationDegradedSnapshotKeepsTranscript(t *testing.T) {
	d := newDaemon(t, 3)
	d.prompt(t, "p1")
	for i := 0; i < 5; i++ {
		d.chunk(t, i)
	}
	reader, _ := open(t, d)
	kept := describe(reader.transcript)
	d.degraded = true
	loadsBefore, modelBefore := d.loads, d.modelRequests
	d.emit(t, livejournal.TypeTurnComplete, "p1", `{"stopReason":"cancelled"}`)
	reader.pump(t)
	if got := reader.episode.State(); got != machines.RepairFailed {
		t.Fatalf("episode %s, want failed", got)
	}
	if d.loads-loadsBefore != 1 || d.modelRequests != modelBefore {
		t.Errorf("loads %d model requests %d, want 1 and 0", d.loads-loadsBefore, d.modelRequests-modelBefore)
	}
	if diff := cmp.Diff([]string{machines.NoticeRepairFailed}, reader.notices); diff != "" {
		t.Errorf("notices (-want +got):\n%s", diff)
	}
	want := append(kept, `#7 turn_complete prompt=p1 data={"stopReason":"cancelled"}`)
	if diff := cmp.Diff(want, describe(reader.transcript)); diff != "" {
		t.Fatalf("kept transcript (-want +got):\n%s", diff)
	}
	// The previous subscription resumed from its cursor.
	d.prompt(t, "p2")
	reader.pump(t)
	if last := reader.transcript[len(reader.transcript)-1]; last.PromptID != "p2" {
		t.Fatalf("the previous subscription did not resume: %s", last.Describe())
	}
}
