package guards

// CallIdentity refuses when call identity contradicts itself: Qwen Code
// 0.24.4 runs one turn at a time and names every call's turn
// (ui_telemetry prompt_id), so once another turn's record ended the
// target's turn, no call of the target's own turn can follow. One that does
// means the turn ids are not what the rule assumes (say, a turn counter not
// primed after a restart), and the bound on the target's tail cannot be
// trusted (ADR 0023).
var CallIdentity Guard[*Evidence] = Func("call-identity", func(e *Evidence) string {
	return e.Transcript.Ownership.CallConflict
})
