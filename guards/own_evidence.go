package guards

import "fmt"

// OwnEvidence lets only the tail owner be decided by the transcript's tail.
// When several prompts dangle, the tail speaks about one of them at most
// (the one whose own prompt record is the chain's last identified one); any
// other dangling prompt is decided only by evidence that names it — its own
// system/turn_result or its own turn's branch_checkpoint (ADR 0026), or the
// proven absence of its own record where the writer stamps identities (ADR
// 0023 part B), or, where it does not, no
// user-role record at all after its own marker with the rest of absence's
// conditions met (TranscriptEvidence.NeverStarted, ADR 0014 2026-12-01) —
// never by a tail, a local command or the absence of a turn that may belong
// to another prompt.
var OwnEvidence Guard[*Evidence] = Func("own-evidence", func(e *Evidence) string {
	if e.TailOwner == "" || e.TailOwner == e.Target || e.Classification.FromTurnResult || e.Classification.FromAbsence || e.Classification.FromCheckpoint {
		return ""
	}
	if e.Classification.FromNotDispatched && e.Transcript.NeverStarted {
		return ""
	}
	return fmt.Sprintf("the transcript's tail is attributed to %s; %s can be decided only by evidence that names it (its own turn_result, or its own record proven absent)", e.TailOwner, e.Target)
})
