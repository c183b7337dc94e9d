package guards

import (
	"fmt"
	"strings"
)

// SeveralDangling replaces SingleDangling under tailproof's rules. With
// several prompts dangling, ordering cannot say whose tail the transcript
// shows, but identity can: the reconciler targets the last-admitted unsettled
// prompt, and this guard allows only when ownership evidence identifies that
// prompt's own turn as the transcript's tail (or its own turn_result settles
// it). The other dangling prompts stay unknown; a later run decides each only
// from its own evidence (a prompt followed by another prompt's turn needs its
// own turn_result). A prompt that provably never started after its own
// marker (TranscriptEvidence.NeverStarted) is decided without any tail, so
// which prompt the tail belongs to does not matter (ADR 0014, 2026-12-01).
var SeveralDangling Guard[*Evidence] = Func("several-dangling", func(e *Evidence) string {
	if len(e.Dangling) <= 1 || identified(e) || e.Transcript.NeverStarted {
		return ""
	}
	return fmt.Sprintf("%d prompts are dangling (%s) and the transcript does not identify %s's turn as its tail",
		len(e.Dangling), strings.Join(e.Dangling, ", "), e.Target)
})
