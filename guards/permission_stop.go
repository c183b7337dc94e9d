package guards

// PermissionStop refuses interrupted for a target whose own Qwen Code 0.24.4
// turn holds a tool result the permission step cancelled
// (TranscriptEvidence.Ownership.PermissionStop): after such a batch the
// agent always ends the turn (stopAfterPermissionCancel,
// acpAgent-GQCJ4KZY.js ~7646: end_turn with no final answer, or cancelled
// when the prompt was aborted), so its tail ending in tool results does not
// show a cut turn. The daemon's terminal would have been completed or
// cancelled; which one the evidence before the turn_result cannot say.
// Strictly narrower than the routes it guards: it only turns interrupted
// stamps into unknowns (found by the simulator's 0.24.4 model, 2026-12-01).
var PermissionStop Guard[*Evidence] = Func("permission-stop", func(e *Evidence) string {
	o := e.Transcript.Ownership
	if !e.Classification.Interrupted || o.PermissionStop == "" {
		return ""
	}
	return "tool result " + o.PermissionStop + " is a call the permission step cancelled: Qwen Code 0.24.4 ends that turn after its tool batch (end_turn without an answer, or cancelled), so it was not interrupted"
})
