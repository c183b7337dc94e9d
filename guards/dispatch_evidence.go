package guards

import "fmt"

// DispatchEvidence requires evidence that a prompt's turn started after the
// target was admitted: a plain user record (a prompt) after the dispatch
// marker, or — without a marker — with a clock at or after the admission (a
// predecessor's prompt in the admission's millisecond is caught by the
// predecessor fence and the strict temporal check).
// Qwen Code's agent writes a prompt's user record when the prompt is
// dispatched, which is always after the daemon appended its in_flight record;
// a tail with no prompt record after admission is some other turn's — a
// background notification or cron turn still streaming while the target
// waited in the queue, or a predecessor's. The reference stamps such tails
// (the simulator's most frequent wrong terminal). Identified turns
// (Ownership) carry their own, stronger evidence.
//
// With a marker the absence is positional proof, not a missing clue: the
// target never started after its marker (TranscriptEvidence.NotDispatched),
// and the reconciler decides interrupted without classifying the foreign
// tail — so the guard passes. Without a marker "after admission" rests on
// the clock, which can step back between admission and dispatch; absence
// proves nothing there and the guard refuses.
var DispatchEvidence Guard[*Evidence] = Func("dispatch-evidence", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || identified(e) {
		return ""
	}
	if t.DispatchUUID != "" {
		// By clock, "after admission" is not enough: under FIFO the target's
		// turn opens after every prompt admitted ahead of it has settled, so
		// its user record cannot be older than their terminals. A prompt
		// record that is must be a predecessor's (dispatched in the
		// admission's millisecond) — or the clock stepped back.
		// Nor can clocks attribute anything when the transcript does not show
		// the latest completed predecessor's turn where the ledger puts it —
		// no prompt record between its admission and its terminal: its own
		// records carry a clock that stepped back, or were lost.
		if t.MarkerUUID == "" && t.PredecessorWatched && !t.PredecessorShown {
			return "no prompt record between the latest completed predecessor's admission and its terminal: the clocks (or lost records) do not place its turn, so they cannot attribute the tail"
		}
		if t.MarkerUUID == "" && e.HasPredTerm && t.HasDispatchMs && float64(t.MaxDispatchMs) < e.PredecessorTerminal {
			return fmt.Sprintf("the latest prompt record after admission (%d) predates a predecessor's terminal (%d): the target's turn opens after it, so that record is not the target's",
				t.MaxDispatchMs, int64(e.PredecessorTerminal))
		}
		return ""
	}
	if t.NotDispatched {
		return ""
	}
	if t.MarkerUUID != "" {
		// The marker is not on the chain (DispatchMarker refuses that too).
		return "no prompt record after admission marker " + t.MarkerUUID + ": the target's turn never started there"
	}
	return "no prompt record with a clock at or after the admission: the target's turn never started there"
})
