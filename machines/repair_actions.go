package machines

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/projections/livejournal"
)

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
