package attribution

import (
	"strings"

	"github.com/tailproof/tailproof/events/qwen"
)

// Provable absence (ADR 0023 part B). Where the writer stamps identities,
// a dangling prompt whose own prompt record is not on the active chain after
// its dispatch marker never started a turn there — if the chain after the
// marker can only have been written by that writer, in full:
//
//   - every user record after the marker that could open a prompt's turn is
//     a 0.24.4 prompt record of another prompt (Proves0244Identities): an
//     identity-less one (an older daemon before a resume by 0.24.4, a
//     mid-turn message, a realtime record) could be the target's;
//   - every file_history_snapshot after the marker follows such a record
//     directly: the ACP prompt path snapshots every prompt's turn, and one
//     with no user record before it is a retry or continue prompt's (which
//     write no user record; acpAgent #executePromptInner), possibly the
//     target's;
//   - every call after the marker made under a prompt turn's id
//     ("<sid>########<n>") belongs to a turn those snapshots (or the one
//     running at the marker) name: a call of an unnamed turn (a
//     restored-question prompt writes neither record nor snapshot) may be
//     the target's;
//   - no compression after the marker (a summary replaces what came before
//     in the api history), and (checked by the core) no record off the
//     active chain (a rewind or branch could hold the target's record).
//
// An admission without a marker (2026-12-01): 0.24.4's bridge writes no
// tailUuid when readTranscriptTailUuid finds nothing — the transcript is
// missing or empty (a session's first prompts and those queued with them),
// or its last line does not parse or is over 64 KiB, or the read failed.
// The whole chain is then read as "after the marker": every condition above
// is checked on a superset of what followed the admission, wherever it fell.
// The one allowance a marker grants — calls of the turn running at it — is
// not made: every call of a prompt turn must be the turn the latest
// snapshot named (turns run one at a time), so a call of an earlier turn
// after a later snapshot (ids handed out again) defeats the proof.
//
// The rule reads no tail: the verdict is interrupted (daemon_lost), the true
// terminal of a prompt whose final answer is not in the transcript.
type absence struct {
	block      string          // the first fact that defeats the proof ("" when none)
	lastPrompt int             // chain index of the last other prompt's 0.24.4 record, -1 if none
	running    string          // the last named turn at or before the marker
	current    string          // without a marker: the turn the latest snapshot named
	named      map[string]bool // turns named by snapshots after the marker
	calls      []string        // prompt-turn ids of calls after the marker, in order
}

func (a *absence) add(f *Fold, i int, rec *qwen.Record) {
	// Without a marker the admission's position is the start, or not shown.
	after := f.marker == "" || f.ev.MarkerIdx >= 0 && i > f.ev.MarkerIdx
	if IsPromptRecord(rec) && Proves0244Identities(rec) && rec.DaemonPromptID != f.target {
		a.lastPrompt = i
	}
	if !after {
		if rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeFileHistorySnapshot && i == a.lastPrompt+1 && a.lastPrompt >= 0 {
			a.running = rec.SnapshotPromptID
		}
		return
	}
	if a.block != "" {
		return
	}
	switch {
	case rec.Type == qwen.TypeUser && !backgroundOrNotice(rec):
		if !IsPromptRecord(rec) || !Proves0244Identities(rec) {
			a.block = "user record " + rec.UUID + " " + a.where(f) + " carries no 0.24.4 prompt identity"
		}
	case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeFileHistorySnapshot:
		if a.lastPrompt < 0 || i != a.lastPrompt+1 {
			a.block = "file_history_snapshot " + rec.UUID + a.onChain(f) + " names a turn with no prompt record before it (a retry or continue prompt)"
			return
		}
		if a.named == nil {
			a.named = map[string]bool{}
		}
		a.named[rec.SnapshotPromptID] = true
		a.current = rec.SnapshotPromptID
	case rec.Type == qwen.TypeSystem && rec.Telemetry != nil:
		id := rec.Telemetry.PromptID
		suffix, ok := mainTurn(id)
		switch {
		case !ok || !digits(suffix):
		case f.marker == "" && id != a.current:
			a.block = "telemetry " + rec.UUID + " names turn " + id + ", not the turn the latest file_history_snapshot before it named (the admission carries no marker: no turn ran at it)"
		default:
			a.calls = append(a.calls, id)
		}
	}
}

// where says which part of the chain the proof reads.
func (a *absence) where(f *Fold) string {
	if f.marker == "" {
		return "on the chain (the admission carries no marker: all of it may follow it)"
	}
	return "after the marker"
}

// onChain is where's note for a marker-less admission ("" otherwise).
func (a *absence) onChain(f *Fold) string {
	if f.marker == "" {
		return " " + a.where(f)
	}
	return ""
}

// result is why absence is not proven ("" when it is), given the fold's
// final state.
func (a *absence) result(f *Fold) string {
	switch {
	case strings.TrimSpace(f.target) == "":
		// No record can carry a blank id (the codec drops a blank
		// daemonPromptId, as the reference's validator does), so its absence
		// proves nothing (conformance seed 1, s1-319).
		return "the prompt id is blank: no record can name it"
	case a.block != "":
		return a.block
	case f.ev.MarkerUUID != "" && f.ev.MarkerIdx < 0:
		return "the admission marker is not on the active chain"
	case f.ev.MarkerUUID == "" && f.lastComp >= 0:
		// Read from the chain's start (see above).
		return "history was compressed (the admission carries no marker: the whole chain is after it)"
	case f.ev.MarkerUUID != "" && f.lastComp > f.ev.MarkerIdx:
		return "history was compressed after the marker"
	}
	for _, id := range a.calls {
		if id != a.running && !a.named[id] {
			return "a call of turn " + id + " after the marker belongs to no prompt record (a prompt that writes none may be the target's)"
		}
	}
	return ""
}
