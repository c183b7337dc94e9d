package machines

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/projections/livejournal"
)

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
func (r *RepairEpisode) State() RepairState { return RepairState(r.m.Current()) }

// Trace lists the transitions attempted, vetoes included (the last
// TraceLimit of them).
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
func (r *RepairEpisode) accepts(event RepairEvent) bool {
	cur := r.State()
	for _, tr := range RepairEpisodeTable.Transitions {
		if tr.Event != string(event) {
			continue
		}
		for _, s := range tr.Src {
			if s == string(cur) {
				return true
			}
		}
	}
	return false
}

// fire runs one transition. A veto returns (false, nil).
func (r *RepairEpisode) fire(ctx context.Context, event RepairEvent, ev *RepairEvidence) (bool, error) {
	ev.SessionID, ev.Target, ev.Attempts = r.session, r.target, r.attempts
	err := r.m.Fire(ctx, string(event), ev)
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

func (r *RepairEpisode) lastVeto(event RepairEvent) string {
	tr := r.m.Trace()
	for i := len(tr) - 1; i >= 0; i-- {
		if tr[i].Event == string(event) && len(tr[i].Vetoes) > 0 {
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
