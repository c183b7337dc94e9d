package machines

import (
	"fmt"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/livejournal"
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
	switch RepairEvent(event) {
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
