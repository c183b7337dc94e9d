package machines

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/projections/livejournal"
)

// parseRepairEvent reads one scenario event: a JSON wire line, or
// `<type> [id=N] [prompt=P] [data=JSON]`; for history_truncated the short
// form also takes truncated=, retained=, max-events=, max-bytes=, full= and
// scope= (scope=none makes a replay-window marker).
func parseRepairEvent(line string) (*livejournal.Event, error) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		return livejournal.DecodeEvent([]byte(line))
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty event line")
	}
	ev := &livejournal.Event{Type: fields[0]}
	m := livejournal.Marker{Reason: livejournal.ReasonReplayWindowExceeded, Scope: livejournal.ScopeLiveJournal,
		MaxBytes: livejournal.DefaultMaxBytes, FullTranscriptAvailable: true}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("bad field %q", f)
		}
		var err error
		switch k {
		case "id":
			ev.ID, err = strconv.ParseInt(v, 10, 64)
		case "prompt":
			ev.PromptID, m.PromptID = v, v
		case "data":
			ev.Data = []byte(v)
		case "truncated":
			m.TruncatedEvents, err = strconv.Atoi(v)
		case "retained":
			m.RetainedEvents, err = strconv.Atoi(v)
		case "max-events":
			m.MaxEvents, err = strconv.Atoi(v)
		case "max-bytes":
			m.MaxBytes, err = strconv.Atoi(v)
		case "full":
			m.FullTranscriptAvailable, err = strconv.ParseBool(v)
		case "scope":
			if v == "none" {
				v = ""
			}
			m.Scope = v
		default:
			return nil, fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: %v", f, err)
		}
	}
	if ev.Type == livejournal.TypeHistoryTruncated && ev.Data == nil {
		return m.Event(), nil
	}
	return ev, nil
}

func parseRepairEvents(t *testing.T, d *datadriven.TestData, input string) []*livejournal.Event {
	var out []*livejournal.Event
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		ev, err := parseRepairEvent(line)
		if err != nil {
			d.Fatalf(t, "%s: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

func parseInFlight(t *testing.T, d *datadriven.TestData) RepairInFlight {
	var f RepairInFlight
	if !d.HasArg("busy") {
		return f
	}
	var vals []string
	d.ScanArgs(t, "busy", &vals)
	for _, v := range vals {
		switch v {
		case "load":
			f.Load = true
		case "history_page":
			f.HistoryPage = true
		case "navigation":
			f.Navigation = true
		case "local_prompt":
			f.LocalPrompt = true
		default:
			d.Fatalf(t, "unknown busy value %q", v)
		}
	}
	return f
}

func TestRepairEpisodeScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/repair_episode", func(t *testing.T, path string) {
		ctx := context.Background()
		var (
			ep   *RepairEpisode
			seen int
			next *RepairCheckpoint // a next_episode checkpoint, for a following `begin next`
		)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var (
				acts []RepairAction
				err  error
				out  strings.Builder
			)
			switch d.Cmd {
			case "table":
				return RepairEpisodeTable.Mermaid()
			case "guards":
				for _, tr := range RepairEpisodeTable.Transitions {
					fmt.Fprintf(&out, "%s: %s\n", tr.Event, RepairEpisodeGuards(tr.Event))
				}
				return out.String()
			case "begin":
				// The client replayed a snapshot into Transcript; a next episode
				// (next=true) starts from the previous commit's checkpoint instead.
				ep, seen = NewRepairEpisode(), 0
				cp := RepairCheckpoint{SessionID: "s1"}
				if d.HasArg("next") {
					if next == nil {
						d.Fatalf(t, "no next checkpoint")
					}
					cp = *next
				} else {
					if d.HasArg("session") {
						d.ScanArgs(t, "session", &cp.SessionID)
					}
					cp.Transcript = parseRepairEvents(t, d, d.Input)
					cp.MarkerIndex = -1
					for i, ev := range cp.Transcript {
						if ev.Type == livejournal.TypeHistoryTruncated {
							cp.MarkerIndex = i
						}
						if ev.ID > cp.Watermark {
							cp.Watermark = ev.ID
						}
					}
					if d.HasArg("marker") {
						d.ScanArgs(t, "marker", &cp.MarkerIndex)
					}
				}
				acts, err = ep.Begin(ctx, cp)
				if sig := ep.Signature(); sig != "" {
					fmt.Fprintf(&out, "signature: %s\n", sig)
				}
			case "observe":
				for _, ev := range parseRepairEvents(t, d, d.Input) {
					ep.Observe(ev)
				}
			case "terminal":
				evs := parseRepairEvents(t, d, d.Input)
				if len(evs) != 1 {
					d.Fatalf(t, "terminal takes one event")
				}
				acts, err = ep.Terminal(ctx, evs[0], parseInFlight(t, d))
			case "settle":
				acts, err = ep.Settled(ctx, parseInFlight(t, d))
			case "loaded":
				load := &livejournal.Load{SessionID: "s1"}
				if d.HasArg("session") {
					d.ScanArgs(t, "session", &load.SessionID)
				}
				load.ReplayDegraded = d.HasArg("degraded")
				compacted, live, _ := strings.Cut(d.Input, "live:")
				load.CompactedReplay = parseRepairEvents(t, d, compacted)
				load.LiveJournal = parseRepairEvents(t, d, live)
				for _, ev := range load.Events() {
					if ev.ID > load.LastEventID {
						load.LastEventID = ev.ID
					}
				}
				acts, err = ep.Loaded(ctx, load)
			case "load-failed":
				var kind string
				d.ScanArgs(t, "kind", &kind)
				acts, err = ep.LoadFailed(ctx, RepairFailure(kind))
			case "abort":
				var cause string
				d.ScanArgs(t, "cause", &cause)
				acts, err = ep.Abort(ctx, RepairAbort(cause))
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			trace := ep.Trace()
			for _, s := range trace[seen:] {
				out.WriteString(s.Describe() + "\n")
			}
			seen = len(trace)
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
			}
			fmt.Fprintf(&out, "state: %s", ep.State())
			if ep.Target() != "" {
				fmt.Fprintf(&out, " target=%s watermark=%d", ep.Target(), ep.Watermark())
			}
			out.WriteByte('\n')
			next = nil
			for _, a := range acts {
				out.WriteString("> " + a.Describe() + "\n")
				if a.Kind == RepairActReplace {
					for _, b := range a.Replacement.Blocks {
						effect := "rebuild"
						if a.Replacement.RepeatsSideEffects(b) {
							effect = "rebuild+effects"
						}
						fmt.Fprintf(&out, ">   %-15s %s\n", effect, b.Describe())
					}
				}
				if a.Kind == RepairActNextEpisode {
					next = a.Next
				}
			}
			return out.String()
		})
	})
}

// TestRepairBlocksShared: the replacement holds the very events of the
// checkpoint and of the snapshot, never copies, and the checkpoint cannot be
// overwritten by the client appending to its transcript.
func TestRepairBlocksShared(t *testing.T) {
	ctx := context.Background()
	old := &livejournal.Event{ID: 1, Type: livejournal.TypeUserMessage, PromptID: "p0"}
	marker := livejournal.Marker{PromptID: "p1", Reason: livejournal.ReasonReplayWindowExceeded, Scope: livejournal.ScopeLiveJournal,
		TruncatedEvents: 2, RetainedEvents: 1, MaxBytes: 100, MaxEvents: 1, FullTranscriptAvailable: true}.Event()
	retained := &livejournal.Event{ID: 5, Type: "agent_message_chunk", PromptID: "p1"}
	transcript := make([]*livejournal.Event, 0, 16) // spare capacity: appends must not reach the checkpoint
	transcript = append(transcript, old, marker, retained)
	ep := NewRepairEpisode()
	if _, err := ep.Begin(ctx, RepairCheckpoint{SessionID: "s", Transcript: transcript, MarkerIndex: 1, Watermark: 5}); err != nil {
		t.Fatal(err)
	}
	intruder := &livejournal.Event{ID: 99, Type: "intruder"}
	_ = append(transcript[:1], intruder) // what a careless client might do to its own slice
	term := &livejournal.Event{ID: 6, Type: livejournal.TypeTurnComplete, PromptID: "p1"}
	if _, err := ep.Terminal(ctx, term, RepairInFlight{}); err != nil {
		t.Fatal(err)
	}
	user := &livejournal.Event{ID: 2, Type: livejournal.TypeUserMessage, PromptID: "p1"}
	load := &livejournal.Load{SessionID: "s", CompactedReplay: []*livejournal.Event{old, user, retained, term}, LastEventID: 6}
	acts, err := ep.Loaded(ctx, load)
	if err != nil {
		t.Fatal(err)
	}
	var rep *Replacement
	for _, a := range acts {
		if a.Kind == RepairActReplace {
			rep = a.Replacement
		}
	}
	if rep == nil {
		t.Fatalf("no replacement in %v", acts)
	}
	want := []*livejournal.Event{old, user, retained, term}
	if len(rep.Blocks) != len(want) {
		t.Fatalf("blocks %d, want %d", len(rep.Blocks), len(want))
	}
	for i := range want {
		if rep.Blocks[i] != want[i] {
			t.Errorf("block %d is %s, not the shared event %s", i, rep.Blocks[i].Describe(), want[i].Describe())
		}
	}
	if got := []bool{rep.RepeatsSideEffects(user), rep.RepeatsSideEffects(term)}; !cmp.Equal(got, []bool{false, false}) {
		t.Errorf("events at or below watermark 6 repeat effects: %v", got)
	}
}

// TestRepairGuardsDefensive covers guard branches the table makes
// unreachable through RepairEpisode (the one-attempt bound), so a future
// transition that re-arms cannot silently allow a second load.
func TestRepairGuardsDefensive(t *testing.T) {
	if v := RepairFirstAttempt.Check(&RepairEvidence{Attempts: 1}); len(v) != 1 {
		t.Fatalf("a second attempt was allowed: %v", v)
	}
	if v := RepairEpisodeGuards(string(RepairOnLoad)).Check(&RepairEvidence{Attempts: 1}); len(v) != 1 || v[0].Guard != "repair.first_attempt" {
		t.Fatalf("load guard did not name first_attempt: %v", v)
	}
	if RepairEpisodeGuards("nonsense") != nil {
		t.Fatal("an unknown event has a guard")
	}
}

func TestRepairIllegalUse(t *testing.T) {
	ctx := context.Background()
	ep := NewRepairEpisode()
	if _, err := ep.Loaded(ctx, &livejournal.Load{}); !errors.Is(err, ErrIllegal) {
		t.Fatalf("Loaded before any load: %v", err)
	}
	if _, err := ep.LoadFailed(ctx, RepairFailureTransport); !errors.Is(err, ErrIllegal) {
		t.Fatalf("LoadFailed before any load: %v", err)
	}
	if _, err := ep.Begin(ctx, RepairCheckpoint{MarkerIndex: 3}); !errors.Is(err, ErrRepairCheckpoint) {
		t.Fatal("Begin with a marker index outside the transcript")
	}
	if ep.State() != RepairIdle {
		t.Fatalf("state %s", ep.State())
	}
	marker := livejournal.Marker{PromptID: "p1", Reason: livejournal.ReasonReplayWindowExceeded, Scope: livejournal.ScopeLiveJournal,
		TruncatedEvents: 1, MaxBytes: 1, FullTranscriptAvailable: true}.Event()
	if _, err := ep.Begin(ctx, RepairCheckpoint{SessionID: "s1", Transcript: []*livejournal.Event{marker}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ep.Begin(ctx, RepairCheckpoint{SessionID: "s2", Transcript: []*livejournal.Event{marker}}); !errors.Is(err, ErrIllegal) {
		t.Fatalf("a second Begin: %v", err)
	}
	if ep.Signature() != "s1/p1@0#0" || ep.State() != RepairCheckpointed {
		t.Fatalf("a refused Begin changed the episode: %s %s", ep.Signature(), ep.State())
	}
}

// A client replayed a snapshot whose live journal was truncated for prompt
// p1. When p1's terminal arrives at an idle point, the episode asks for one
// load; the fresh snapshot holds the complete turn and replaces the tail.
func ExampleRepairEpisode() {
	ctx := context.Background()
	marker := livejournal.Marker{PromptID: "p1", Reason: livejournal.ReasonReplayWindowExceeded,
		Scope: livejournal.ScopeLiveJournal, TruncatedEvents: 2, RetainedEvents: 1, MaxBytes: 1 << 20,
		MaxEvents: 1, FullTranscriptAvailable: true}
	user := &livejournal.Event{ID: 1, Type: livejournal.TypeUserMessage, PromptID: "p1"}
	c1 := &livejournal.Event{ID: 2, Type: "agent_message_chunk", PromptID: "p1"}
	c2 := &livejournal.Event{ID: 3, Type: "agent_message_chunk", PromptID: "p1"}
	done := &livejournal.Event{ID: 4, Type: livejournal.TypeTurnComplete, PromptID: "p1"}

	ep := NewRepairEpisode()
	ep.Begin(ctx, RepairCheckpoint{SessionID: "s1", Transcript: []*livejournal.Event{marker.Event(), c2}, MarkerIndex: 0, Watermark: 3})
	acts, _ := ep.Terminal(ctx, done, RepairInFlight{})
	for _, a := range acts {
		fmt.Println(a.Describe())
	}
	acts, _ = ep.Loaded(ctx, &livejournal.Load{SessionID: "s1", CompactedReplay: []*livejournal.Event{user, c1, c2, done}, LastEventID: 4})
	for _, a := range acts {
		fmt.Println(a.Describe())
	}
	fmt.Println(ep.State())
	// Output:
	// pause_subscription session=s1 cursor=4
	// load session=s1 memory_replay=true
	// adopt_candidate session=s1
	// replace session=s1 blocks=4 watermark=4
	// discard_checkpoint session=s1
	// committed
}

// TestRepairEpisodeProperty drives random interleavings of terminals, idle
// points, snapshots, failures and aborts through one episode and checks what
// must hold whatever the order: at most one load, at most one notice, a
// replacement only after a load and only from a valid same-session snapshot,
// and never an error from the calls a client makes whenever it likes.
func TestRepairEpisodeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		marker := livejournal.Marker{PromptID: "p1", Reason: livejournal.ReasonReplayWindowExceeded, Scope: livejournal.ScopeLiveJournal,
			TruncatedEvents: 2, RetainedEvents: 1, MaxBytes: 100, FullTranscriptAvailable: true}.Event()
		ep := NewRepairEpisode()
		if _, err := ep.Begin(ctx, RepairCheckpoint{SessionID: "s1", Transcript: []*livejournal.Event{marker,
			{ID: 5, Type: "agent_message_chunk", PromptID: "p1"}}, Watermark: 5}); err != nil {
			t.Fatal(err)
		}
		loads, notices, replaces, id := 0, 0, 0, int64(5)
		loading := false
		steps := rapid.IntRange(1, 25).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			var acts []RepairAction
			var err error
			busy := RepairInFlight{Load: rapid.Bool().Draw(t, "busy")}
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); op {
			case 0:
				id++
				prompt := rapid.SampledFrom([]string{"p1", "p2"}).Draw(t, "prompt")
				typ := rapid.SampledFrom([]string{livejournal.TypeTurnComplete, livejournal.TypeTurnError, "agent_message_chunk"}).Draw(t, "type")
				acts, err = ep.Terminal(ctx, &livejournal.Event{ID: id, Type: typ, PromptID: prompt}, busy)
			case 1:
				acts, err = ep.Settled(ctx, busy)
			case 2:
				if !loading {
					continue // a snapshot only answers the episode's own load
				}
				load := &livejournal.Load{SessionID: rapid.SampledFrom([]string{"s1", "s2"}).Draw(t, "session"),
					ReplayDegraded: rapid.Bool().Draw(t, "degraded")}
				if rapid.Bool().Draw(t, "user") {
					load.CompactedReplay = append(load.CompactedReplay, &livejournal.Event{ID: 1, Type: livejournal.TypeUserMessage, PromptID: "p1"})
				}
				if rapid.Bool().Draw(t, "terminal") {
					load.CompactedReplay = append(load.CompactedReplay, &livejournal.Event{ID: 9, Type: livejournal.TypeTurnComplete, PromptID: "p1"})
				}
				acts, err = ep.Loaded(ctx, load)
				for _, a := range acts {
					if a.Kind == RepairActReplace && (load.SessionID != "s1" || load.ReplayDegraded || len(load.CompactedReplay) != 2) {
						t.Fatalf("replaced from an invalid snapshot %+v", load)
					}
				}
			case 3:
				if !loading {
					continue
				}
				acts, err = ep.LoadFailed(ctx, rapid.SampledFrom([]RepairFailure{RepairFailureTransport, RepairFailureAuth, RepairFailureMissingSession}).Draw(t, "failure"))
			case 4:
				acts, err = ep.Abort(ctx, rapid.SampledFrom([]RepairAbort{RepairAbortReload, RepairAbortOwnReload, RepairAbortClear}).Draw(t, "cause"))
			case 5:
				id++
				ep.Observe(&livejournal.Event{ID: id, Type: "agent_message_chunk", PromptID: "p1"})
			}
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			for _, a := range acts {
				switch a.Kind {
				case RepairActLoad:
					loads++
				case RepairActNotice:
					notices++
				case RepairActReplace:
					replaces++
					if loads != 1 {
						t.Fatal("a replacement without a load")
					}
				}
			}
			loading = ep.State() == RepairLoading
		}
		if loads > 1 || notices > 1 || replaces > 1 || notices+replaces > 1 {
			t.Fatalf("loads=%d notices=%d replaces=%d", loads, notices, replaces)
		}
		if ep.State() == RepairFailed && notices != 1 {
			t.Fatalf("failed with %d notices", notices)
		}
	})
}
