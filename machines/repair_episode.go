package machines

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/livejournal"
)

// The repair episode runs in a client that replayed a snapshot whose live
// journal was truncated. It waits for the turn the marker belongs to to end,
// then reloads the session once (memory replay, no model request) and
// replaces the partial tail with the complete turn, or keeps what it has and
// says so exactly once.

// Repair episode states.
const (
	RepairIdle         = "idle"         // no recoverable marker seen
	RepairCheckpointed = "checkpointed" // a checkpoint sits just before the marker
	RepairArmed        = "armed"        // the marker's prompt formally ended
	RepairDeferred     = "deferred"     // armed, but a load, page, navigation or local prompt is in flight
	RepairLoading      = "loading"      // the one repair load is outstanding
	RepairValidating   = "validating"   // the fresh snapshot is being checked
	RepairCommitted    = "committed"    // the suffix was replaced
	RepairFailed       = "failed"       // the transcript was kept; one notice was emitted
	RepairAborted      = "aborted"      // reload, session switch, unmount or clear removed the episode
)

// Repair episode events.
const (
	RepairOnMarker       = "marker"       // idle -> checkpointed
	RepairOnTerminal     = "terminal"     // checkpointed -> armed
	RepairOnBusy         = "busy"         // armed -> deferred
	RepairOnSettled      = "settled"      // deferred -> armed
	RepairOnLoad         = "load"         // armed -> loading
	RepairOnLoaded       = "loaded"       // loading -> validating
	RepairOnLoadFailed   = "load_failed"  // loading -> failed (retriable transport failure)
	RepairOnDisconnected = "disconnected" // loading -> failed (authentication failure or missing session)
	RepairOnCommit       = "commit"       // validating -> committed
	RepairOnReject       = "reject"       // validating -> failed
	RepairOnAbort        = "abort"        // any live state -> aborted
)

// RepairEpisodeTable is the repair episode's transition table.
var RepairEpisodeTable = Table{
	Name:    "repair_episode",
	Initial: RepairIdle,
	Transitions: []Transition{
		{Event: RepairOnMarker, Src: []string{RepairIdle}, Dst: RepairCheckpointed},
		{Event: RepairOnTerminal, Src: []string{RepairCheckpointed}, Dst: RepairArmed},
		{Event: RepairOnBusy, Src: []string{RepairArmed}, Dst: RepairDeferred},
		{Event: RepairOnSettled, Src: []string{RepairDeferred}, Dst: RepairArmed},
		{Event: RepairOnLoad, Src: []string{RepairArmed}, Dst: RepairLoading},
		{Event: RepairOnLoaded, Src: []string{RepairLoading}, Dst: RepairValidating},
		{Event: RepairOnLoadFailed, Src: []string{RepairLoading}, Dst: RepairFailed},
		{Event: RepairOnDisconnected, Src: []string{RepairLoading}, Dst: RepairFailed},
		{Event: RepairOnCommit, Src: []string{RepairValidating}, Dst: RepairCommitted},
		{Event: RepairOnReject, Src: []string{RepairValidating}, Dst: RepairFailed},
		{Event: RepairOnAbort, Src: []string{RepairCheckpointed, RepairArmed, RepairDeferred, RepairLoading, RepairValidating}, Dst: RepairAborted},
	},
}

// RepairInFlight lists the client work that makes this a bad moment to reload:
// the repair waits for the next idle point rather than race it.
type RepairInFlight struct {
	Load        bool // a session load (not the repair's own)
	HistoryPage bool // an older-history page request
	Navigation  bool
	LocalPrompt bool // a prompt the user just sent that the daemon has not admitted yet
}

// Busy reports whether anything is in flight.
func (f RepairInFlight) Busy() bool { return f.Load || f.HistoryPage || f.Navigation || f.LocalPrompt }

func (f RepairInFlight) String() string {
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{f.Load, "load"}, {f.HistoryPage, "history_page"}, {f.Navigation, "navigation"}, {f.LocalPrompt, "local_prompt"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "+")
}

// RepairFailure classifies why the repair load produced no snapshot.
type RepairFailure string

const (
	RepairFailureTransport      RepairFailure = "transport"       // retriable: the old subscription can resume
	RepairFailureAuth           RepairFailure = "auth"            // the stream needs reauthentication
	RepairFailureMissingSession RepairFailure = "missing_session" // the daemon no longer knows the session
)

// RepairAbort is why the client discards an episode.
type RepairAbort string

const (
	RepairAbortReload        RepairAbort = "reload" // a configured (user-visible) reload
	RepairAbortSessionSwitch RepairAbort = "session_switch"
	RepairAbortUnmount       RepairAbort = "unmount"
	RepairAbortClear         RepairAbort = "clear" // an explicit session clear
	// RepairAbortOwnReload is the episode's own reload. It is named so that a client
	// that routes every reload through Abort cannot abort its own repair.
	RepairAbortOwnReload RepairAbort = "repair_reload"
)

// RepairEvidence is what the repair guards read. The episode fills it for
// each transition; a guard reads nothing else.
type RepairEvidence struct {
	SessionID string // the episode's session
	Target    string // the marker's owning prompt ("" before the checkpoint)
	Attempts  int    // repair loads already started

	Marker    *livejournal.Marker  // marker: the decoded marker, nil when it did not decode
	MarkerErr error                // marker: why it did not decode
	Retained  []*livejournal.Event // marker: events after the marker, for attribution

	Terminal *livejournal.Event // terminal: the event that ended a turn
	InFlight RepairInFlight     // busy, settled, load
	Load     *livejournal.Load  // loaded, commit, reject: the fresh snapshot
	Failure  RepairFailure      // load_failed, disconnected
	Abort    RepairAbort        // abort
}

// Repair guards. Each prints its name; the combinations print canonically.
var (
	RepairMarkerValid = guards.Func("repair.marker_valid", func(e *RepairEvidence) string {
		if e.Marker == nil {
			if e.MarkerErr != nil {
				return e.MarkerErr.Error()
			}
			return "no marker"
		}
		return ""
	})
	RepairMarkerLive = guards.Func("repair.marker_live_journal", func(e *RepairEvidence) string {
		if e.Marker != nil && !e.Marker.IsLiveJournal() {
			return "a replay-window marker is about completed history; no turn can restore it"
		}
		return ""
	})
	RepairMarkerRecoverable = guards.Func("repair.full_transcript_available", func(e *RepairEvidence) string {
		if e.Marker != nil && !e.Marker.FullTranscriptAvailable {
			return "the daemon says the discarded events are not in a full transcript"
		}
		return ""
	})
	RepairMarkerOwned = guards.Func("repair.marker_owned", func(e *RepairEvidence) string {
		if e.Marker == nil || !e.Marker.IsLiveJournal() {
			return ""
		}
		if _, err := e.Marker.Owner(e.Retained); err != nil {
			return err.Error()
		}
		return ""
	})
	RepairTerminalFormal = guards.Func("repair.terminal_formal", func(e *RepairEvidence) string {
		switch {
		case e.Terminal == nil:
			return "no terminal event"
		case !livejournal.IsTerminal(e.Terminal.Type):
			return fmt.Sprintf("%s is not turn_complete or turn_error", e.Terminal.Type)
		}
		return ""
	})
	RepairTerminalMatches = guards.Func("repair.terminal_matches_prompt", func(e *RepairEvidence) string {
		if e.Terminal != nil && e.Terminal.PromptID != e.Target {
			return fmt.Sprintf("terminal is for prompt %q, the marker for %q", e.Terminal.PromptID, e.Target)
		}
		return ""
	})
	RepairIdlePoint = guards.Func("repair.idle_point", func(e *RepairEvidence) string {
		if e.InFlight.Busy() {
			return "in flight: " + e.InFlight.String()
		}
		return ""
	})
	RepairFirstAttempt = guards.Func("repair.first_attempt", func(e *RepairEvidence) string {
		if e.Attempts > 0 {
			return fmt.Sprintf("%d automatic attempt(s) already made; at most one", e.Attempts)
		}
		return ""
	})
	RepairSameSession = guards.Func("repair.same_session", func(e *RepairEvidence) string {
		switch {
		case e.Load == nil:
			return "no snapshot"
		case e.Load.SessionID != e.SessionID:
			return fmt.Sprintf("snapshot is for session %q, the episode for %q", e.Load.SessionID, e.SessionID)
		}
		return ""
	})
	RepairSnapshotNotDegraded = guards.Func("repair.snapshot_not_degraded", func(e *RepairEvidence) string {
		switch {
		case e.Load == nil:
			return "no snapshot"
		case e.Load.ReplayDegraded:
			return "the daemon marked the replay degraded"
		}
		return ""
	})
	RepairSnapshotHasUserInput = guards.Func("repair.snapshot_has_user_input", func(e *RepairEvidence) string {
		if e.Load == nil || userInputIndex(e.Load.Events(), e.Target) < 0 {
			return fmt.Sprintf("no %s for prompt %q", livejournal.TypeUserMessage, e.Target)
		}
		return ""
	})
	RepairSnapshotHasTerminal = guards.Func("repair.snapshot_has_terminal", func(e *RepairEvidence) string {
		if e.Load != nil {
			for _, ev := range e.Load.Events() {
				if ev != nil && livejournal.IsTerminal(ev.Type) && ev.PromptID == e.Target {
					return ""
				}
			}
		}
		return fmt.Sprintf("no turn_complete or turn_error for prompt %q", e.Target)
	})
	RepairTransportFailure = guards.Func("repair.transport_failure", func(e *RepairEvidence) string {
		if e.Failure != RepairFailureTransport {
			return fmt.Sprintf("failure %q is not a retriable transport failure", e.Failure)
		}
		return ""
	})
	RepairSessionUnusable = guards.Func("repair.session_unusable", func(e *RepairEvidence) string {
		if e.Failure != RepairFailureAuth && e.Failure != RepairFailureMissingSession {
			return fmt.Sprintf("failure %q leaves the session usable", e.Failure)
		}
		return ""
	})
	RepairAbortCause = guards.Func("repair.abort_cause", func(e *RepairEvidence) string {
		switch e.Abort {
		case RepairAbortReload, RepairAbortSessionSwitch, RepairAbortUnmount, RepairAbortClear:
			return ""
		case RepairAbortOwnReload:
			return "the repair's own reload keeps the episode"
		}
		return fmt.Sprintf("unknown abort cause %q", e.Abort)
	})

	// RepairSnapshotValid is what a fresh snapshot must show to replace
	// anything; reject is exactly its negation, so every snapshot goes one
	// way or the other.
	RepairSnapshotValid = guards.All(RepairSnapshotNotDegraded, RepairSnapshotHasUserInput, RepairSnapshotHasTerminal)
)

// RepairEpisodeGuards returns the guard of each repair event.
func RepairEpisodeGuards(event string) guards.Guard[*RepairEvidence] {
	switch event {
	case RepairOnMarker:
		return guards.All(RepairMarkerValid, RepairMarkerLive, RepairMarkerRecoverable, RepairMarkerOwned)
	case RepairOnTerminal:
		return guards.All(RepairTerminalFormal, RepairTerminalMatches)
	case RepairOnBusy:
		return guards.Not(RepairIdlePoint)
	case RepairOnSettled:
		return RepairIdlePoint
	case RepairOnLoad:
		return guards.All(RepairIdlePoint, RepairFirstAttempt)
	case RepairOnLoaded:
		return RepairSameSession
	case RepairOnLoadFailed:
		return RepairTransportFailure
	case RepairOnDisconnected:
		return RepairSessionUnusable
	case RepairOnCommit:
		return RepairSnapshotValid
	case RepairOnReject:
		return guards.Not(RepairSnapshotValid)
	case RepairOnAbort:
		return RepairAbortCause
	}
	return nil
}

// NoticeRepairFailed is the code of the one recoverable notice a failed
// repair emits.
const NoticeRepairFailed = "daemon.live_journal_repair.failed"

// RepairActionKind names work the client must do; the episode itself does
// no IO.
type RepairActionKind string

const (
	RepairActPauseSubscription  RepairActionKind = "pause_subscription"  // pause (not detach) the current stream at Cursor
	RepairActLoad               RepairActionKind = "load"                // one same-session load, memory replay, no page size
	RepairActAdoptCandidate     RepairActionKind = "adopt_candidate"     // the repair load's stream becomes the subscription owner
	RepairActDetachCandidate    RepairActionKind = "detach_candidate"    // drop the repair load's stream
	RepairActResumeSubscription RepairActionKind = "resume_subscription" // resume the paused stream from Cursor
	RepairActReplace            RepairActionKind = "replace"             // one store reset with Replacement
	RepairActNotice             RepairActionKind = "notice"              // show Notice
	RepairActDiscardCheckpoint  RepairActionKind = "discard_checkpoint"  // forget the episode's checkpoint
	RepairActNextEpisode        RepairActionKind = "next_episode"        // start a separate episode at Next
)

// RepairNotice is a user-visible message.
type RepairNotice struct {
	Code        string
	Recoverable bool
	Message     string
}

// RepairAction is one piece of client work.
type RepairAction struct {
	Kind         RepairActionKind
	SessionID    string
	Cursor       int64 // the last event id the client applied
	MemoryReplay bool  // RepairActLoad: replay from the daemon's memory, no history page size
	Replacement  *Replacement
	Notice       *RepairNotice
	Next         *RepairCheckpoint
}

// Describe is the action's stable one-line text form.
func (a RepairAction) Describe() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	if a.SessionID != "" {
		b.WriteString(" session=" + a.SessionID)
	}
	switch a.Kind {
	case RepairActPauseSubscription, RepairActResumeSubscription:
		b.WriteString(" cursor=" + strconv.FormatInt(a.Cursor, 10))
	case RepairActLoad:
		b.WriteString(" memory_replay=" + strconv.FormatBool(a.MemoryReplay))
	case RepairActReplace:
		fmt.Fprintf(&b, " blocks=%d watermark=%d", len(a.Replacement.Blocks), a.Replacement.Watermark)
	case RepairActNotice:
		fmt.Fprintf(&b, " %s recoverable=%t: %s", a.Notice.Code, a.Notice.Recoverable, a.Notice.Message)
	case RepairActNextEpisode:
		fmt.Fprintf(&b, " marker_index=%d watermark=%d", a.Next.MarkerIndex, a.Next.Watermark)
	}
	return b.String()
}

// Replacement is the repaired transcript, committed as one store reset.
// Blocks are references to the same immutable events the checkpoint and the
// fresh snapshot hold.
type Replacement struct {
	Blocks    []*livejournal.Event
	Watermark int64 // the last event id the client had applied before the repair
}

// RepeatsSideEffects reports whether rebuilding ev may run its side effects
// (notices, workspace signals, publications). Only events newer than the
// watermark may: the client already ran the effects of everything at or
// below it. An event without an id (a marker, a compacted record) cannot be
// proved new, so it rebuilds state only.
func (r Replacement) RepeatsSideEffects(ev *livejournal.Event) bool {
	return ev != nil && ev.ID > r.Watermark
}

// RepairCheckpoint is where an episode starts: the client's transcript as replayed
// from a snapshot, the index of the live-journal marker in it, and the
// snapshot's last event id. Transcript is shared, not copied: the episode
// keeps only the blocks before the marker, through a capacity-limited slice
// so the client's later appends never write into it.
type RepairCheckpoint struct {
	SessionID   string
	Transcript  []*livejournal.Event
	MarkerIndex int
	Watermark   int64
}

// RepairEpisode drives one episode of RepairEpisodeTable. It is driven from
// one client event loop and is not safe for concurrent use. Methods return the
// actions the client performs; an error is returned only for an illegal use
// (an event the table does not allow from the current state). A guard
// refusal is not an error: the state stays, and Trace says why.
type RepairEpisode struct {
	m         *Machine[*RepairEvidence]
	session   string
	target    string
	marker    livejournal.Marker
	signature string
	prefix    []*livejournal.Event
	markerIdx int
	watermark int64
	attempts  int
	notices   int
}

// NewRepairEpisode returns an episode in RepairIdle.
func NewRepairEpisode() *RepairEpisode {
	return &RepairEpisode{m: New(RepairEpisodeTable, RepairEpisodeGuards)}
}

// State is the current state.
func (r *RepairEpisode) State() string { return r.m.Current() }

// Trace lists every transition attempted, vetoes included.
func (r *RepairEpisode) Trace() []Step { return r.m.Trace() }

// Target is the prompt the episode repairs ("" before Begin succeeded).
func (r *RepairEpisode) Target() string { return r.target }

// Watermark is the last event id the client has applied.
func (r *RepairEpisode) Watermark() int64 { return r.watermark }

// Notices counts the notices this episode emitted (at most one).
func (r *RepairEpisode) Notices() int { return r.notices }

// Marker is the live-journal marker the episode checkpointed (zero before
// Begin succeeded); its Status is what the client shows meanwhile.
func (r *RepairEpisode) Marker() livejournal.Marker { return r.marker }

// Signature identifies the episode deterministically from its checkpoint
// (session, target prompt, snapshot watermark, marker index), so a client
// can tell a new episode for the same prompt from the one it already ran.
// It is "" before Begin succeeded and never changes afterwards.
func (r *RepairEpisode) Signature() string { return r.signature }

// ErrRepairCheckpoint classifies a checkpoint the episode cannot start from.
var ErrRepairCheckpoint = errors.New("bad repair checkpoint")

// accepts reports whether the table has event from the current state. The
// client sends terminals, idle points and aborts whenever they happen; those
// that mean nothing to the episode in its current state are ignored rather
// than reported as illegal.
func (r *RepairEpisode) accepts(event string) bool {
	cur := r.State()
	for _, tr := range RepairEpisodeTable.Transitions {
		if tr.Event != event {
			continue
		}
		for _, s := range tr.Src {
			if s == cur {
				return true
			}
		}
	}
	return false
}

// fire runs one transition. A veto returns (false, nil).
func (r *RepairEpisode) fire(ctx context.Context, event string, ev *RepairEvidence) (bool, error) {
	ev.SessionID, ev.Target, ev.Attempts = r.session, r.target, r.attempts
	err := r.m.Fire(ctx, event, ev)
	var veto *VetoError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &veto):
		return false, nil
	}
	return false, err
}

// Begin checkpoints just before the live-journal marker at cp.MarkerIndex.
// A marker that is malformed, about the replay window, not backed by a full
// transcript or not attributable to one prompt is vetoed: the episode stays
// idle and the client keeps the marker's status text as its only repair.
// Begin returns no actions: checkpointing is bookkeeping only.
func (r *RepairEpisode) Begin(ctx context.Context, cp RepairCheckpoint) ([]RepairAction, error) {
	if cp.MarkerIndex < 0 || cp.MarkerIndex >= len(cp.Transcript) {
		return nil, fmt.Errorf("machines: repair episode: marker index %d outside a transcript of %d blocks: %w", cp.MarkerIndex, len(cp.Transcript), ErrRepairCheckpoint)
	}
	ev := &RepairEvidence{Retained: cp.Transcript[cp.MarkerIndex+1:]}
	m, err := livejournal.MarkerFromEvent(cp.Transcript[cp.MarkerIndex])
	if err != nil {
		ev.MarkerErr = err
	} else {
		ev.Marker = &m
	}
	ok, err := r.fire(ctx, RepairOnMarker, ev)
	if err != nil || !ok {
		return nil, err
	}
	r.session = cp.SessionID
	r.target, _ = m.Owner(ev.Retained)
	r.marker = m
	r.prefix = cp.Transcript[:cp.MarkerIndex:cp.MarkerIndex]
	r.markerIdx = cp.MarkerIndex
	r.watermark = cp.Watermark
	r.signature = fmt.Sprintf("%s/%s@%d#%d", r.session, r.target, cp.Watermark, cp.MarkerIndex)
	return nil, nil
}

// Observe records that the client applied a live event: its id raises the
// watermark (and so the cursor the paused stream resumes from). It fires
// nothing.
func (r *RepairEpisode) Observe(ev *livejournal.Event) {
	if ev != nil && ev.ID > r.watermark {
		r.watermark = ev.ID
	}
}

// Terminal offers a live event that may end the marker's turn. A terminal for
// another prompt is vetoed and changes nothing. A matching one arms the
// episode and, at an idle point, starts the one repair load; otherwise the
// episode waits in deferred for Settled.
func (r *RepairEpisode) Terminal(ctx context.Context, ev *livejournal.Event, inFlight RepairInFlight) ([]RepairAction, error) {
	r.Observe(ev)
	if !r.accepts(RepairOnTerminal) {
		return nil, nil
	}
	ok, err := r.fire(ctx, RepairOnTerminal, &RepairEvidence{Terminal: ev})
	if err != nil || !ok {
		return nil, err
	}
	return r.attempt(ctx, inFlight)
}

// Settled reports an idle point (or a change in what is in flight). Only a
// deferred episode acts on it.
func (r *RepairEpisode) Settled(ctx context.Context, inFlight RepairInFlight) ([]RepairAction, error) {
	if !r.accepts(RepairOnSettled) {
		return nil, nil
	}
	ok, err := r.fire(ctx, RepairOnSettled, &RepairEvidence{InFlight: inFlight})
	if err != nil || !ok {
		return nil, err
	}
	return r.attempt(ctx, inFlight)
}

func (r *RepairEpisode) attempt(ctx context.Context, inFlight RepairInFlight) ([]RepairAction, error) {
	if inFlight.Busy() {
		_, err := r.fire(ctx, RepairOnBusy, &RepairEvidence{InFlight: inFlight})
		return nil, err
	}
	ok, err := r.fire(ctx, RepairOnLoad, &RepairEvidence{InFlight: inFlight})
	if err != nil || !ok {
		return nil, err
	}
	r.attempts++
	return []RepairAction{
		{Kind: RepairActPauseSubscription, SessionID: r.session, Cursor: r.watermark},
		{Kind: RepairActLoad, SessionID: r.session, MemoryReplay: true},
	}, nil
}

// Loaded hands the repair load's snapshot to the episode. A snapshot for
// another session is vetoed (the episode keeps waiting for its own). A valid
// one commits: the suffix from the earliest user input of the target prompt
// through the snapshot's tail replaces everything from the checkpoint on, in
// one Replacement. An invalid one is rejected: the transcript stays, the old
// subscription resumes and one notice is emitted.
func (r *RepairEpisode) Loaded(ctx context.Context, load *livejournal.Load) ([]RepairAction, error) {
	ok, err := r.fire(ctx, RepairOnLoaded, &RepairEvidence{Load: load})
	if err != nil || !ok {
		return nil, err
	}
	ok, err = r.fire(ctx, RepairOnCommit, &RepairEvidence{Load: load})
	if err != nil {
		return nil, err
	}
	if !ok {
		if _, err := r.fire(ctx, RepairOnReject, &RepairEvidence{Load: load}); err != nil {
			return nil, err
		}
		veto := r.lastVeto(RepairOnCommit)
		return append([]RepairAction{{Kind: RepairActDetachCandidate, SessionID: r.session}},
			r.failure(true, "the fresh snapshot was rejected: "+veto)...), nil
	}
	rep := r.replacement(load)
	acts := []RepairAction{
		{Kind: RepairActAdoptCandidate, SessionID: r.session},
		{Kind: RepairActReplace, SessionID: r.session, Replacement: rep},
		{Kind: RepairActDiscardCheckpoint, SessionID: r.session},
	}
	if next := r.nextCheckpoint(rep, load.LastEventID); next != nil {
		acts = append(acts, RepairAction{Kind: RepairActNextEpisode, SessionID: r.session, Next: next})
	}
	return acts, nil
}

// LoadFailed reports that the repair load produced no snapshot. Both kinds
// keep the transcript and emit one notice; only a transport failure resumes
// the previous stream, because after an authentication failure or with the
// session gone that stream cannot safely resume and the client's existing
// disconnected or reauthentication state must stand.
func (r *RepairEpisode) LoadFailed(ctx context.Context, kind RepairFailure) ([]RepairAction, error) {
	event := RepairOnLoadFailed
	if kind == RepairFailureAuth || kind == RepairFailureMissingSession {
		event = RepairOnDisconnected
	}
	ok, err := r.fire(ctx, event, &RepairEvidence{Failure: kind})
	if err != nil || !ok {
		return nil, err
	}
	acts := []RepairAction{{Kind: RepairActDetachCandidate, SessionID: r.session}}
	return append(acts, r.failure(event == RepairOnLoadFailed, "the repair load failed: "+string(kind))...), nil
}

// Abort removes the episode for a configured reload, a session switch, an
// unmount or an explicit clear. The repair's own reload is vetoed; an
// episode that is idle or already finished ignores the call.
func (r *RepairEpisode) Abort(ctx context.Context, cause RepairAbort) ([]RepairAction, error) {
	src := r.State()
	if !r.accepts(RepairOnAbort) {
		return nil, nil
	}
	ok, err := r.fire(ctx, RepairOnAbort, &RepairEvidence{Abort: cause})
	if err != nil || !ok {
		return nil, err
	}
	var acts []RepairAction
	if src == RepairLoading || src == RepairValidating {
		acts = append(acts, RepairAction{Kind: RepairActDetachCandidate, SessionID: r.session})
	}
	return append(acts, RepairAction{Kind: RepairActDiscardCheckpoint, SessionID: r.session}), nil
}

func (r *RepairEpisode) failure(resume bool, why string) []RepairAction {
	var acts []RepairAction
	if resume {
		acts = append(acts, RepairAction{Kind: RepairActResumeSubscription, SessionID: r.session, Cursor: r.watermark})
	}
	acts = append(acts, RepairAction{Kind: RepairActDiscardCheckpoint, SessionID: r.session})
	if r.notices == 0 {
		r.notices++
		acts = append(acts, RepairAction{Kind: RepairActNotice, SessionID: r.session, Notice: &RepairNotice{
			Code:        NoticeRepairFailed,
			Recoverable: true,
			Message:     fmt.Sprintf("Could not restore the truncated turn of prompt %s; %s. The visible transcript was kept.", r.target, why),
		}})
	}
	return acts
}

func (r *RepairEpisode) lastVeto(event string) string {
	tr := r.m.Trace()
	for i := len(tr) - 1; i >= 0; i-- {
		if tr[i].Event == event && len(tr[i].Vetoes) > 0 {
			parts := make([]string, len(tr[i].Vetoes))
			for k, v := range tr[i].Vetoes {
				parts[k] = v.String()
			}
			return strings.Join(parts, "; ")
		}
	}
	return "vetoed"
}

// replacement keeps the checkpoint's blocks before the marker, cut at the
// target's earliest user input if an older copy of it sits there, and
// appends the fresh snapshot from the earliest user input of the target on.
func (r *RepairEpisode) replacement(load *livejournal.Load) *Replacement {
	fresh := load.Events()
	prefix := r.prefix
	if i := userInputIndex(prefix, r.target); i >= 0 {
		prefix = prefix[:i]
	}
	suffix := fresh[userInputIndex(fresh, r.target):]
	blocks := make([]*livejournal.Event, 0, len(prefix)+len(suffix))
	blocks = append(append(blocks, prefix...), suffix...)
	return &Replacement{Blocks: blocks, Watermark: r.watermark}
}

// nextCheckpoint finds a live-journal marker after the target's terminal in
// the repaired transcript: a later turn outgrew the journal too, and gets its
// own episode (its own single attempt). A marker owned by the target itself
// cannot follow the target's terminal in an honest snapshot, so it starts
// nothing, which also rules out an endless chain of episodes.
func (r *RepairEpisode) nextCheckpoint(rep *Replacement, lastEventID int64) *RepairCheckpoint {
	end := -1
	for i, ev := range rep.Blocks {
		if ev != nil && livejournal.IsTerminal(ev.Type) && ev.PromptID == r.target {
			end = i
		}
	}
	for i := len(rep.Blocks) - 1; i > end; i-- {
		ev := rep.Blocks[i]
		if ev == nil || ev.Type != livejournal.TypeHistoryTruncated {
			continue
		}
		m, err := livejournal.MarkerFromEvent(ev)
		if err != nil || !m.IsLiveJournal() {
			return nil
		}
		if owner, err := m.Owner(rep.Blocks[i+1:]); err != nil || owner == r.target {
			return nil
		}
		wm := lastEventID
		if wm < rep.Watermark {
			wm = rep.Watermark
		}
		return &RepairCheckpoint{SessionID: r.session, Transcript: rep.Blocks, MarkerIndex: i, Watermark: wm}
	}
	return nil
}

func userInputIndex(evs []*livejournal.Event, prompt string) int {
	for i, ev := range evs {
		if ev != nil && ev.Type == livejournal.TypeUserMessage && ev.PromptID == prompt {
			return i
		}
	}
	return -1
}
