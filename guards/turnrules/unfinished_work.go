package turnrules

import (
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// UnfinishedWork allows when the turn's durable tail shows work the model
// had not finished: input it had not answered, a tool call or result it had
// not followed up, reasoning with no answer after it, a message still
// streaming or one the model meant to continue. Both harnesses write in
// order from one writer, so a later record cannot be durable while an
// earlier one is not; a tail that stops mid-work is a turn that did not
// complete on disk.
//
// It refuses when the last progress answers the last call of a batch the
// harness said ends the turn (a ToolResult with Stop StopFinal), and when
// the last progress is a complete message the model meant
// as its answer, or one whose intent the record does not state: then only
// the end record may be missing (a batched or unflushed write lost at the
// crash, Claude Code #40378; Codex #47124 in reverse), and interrupted could
// be wrong.
var UnfinishedWork guards.Guard[*turnfold.Evidence] = guards.Func("unfinished-work", func(e *turnfold.Evidence) string {
	t := e.Turn
	switch t.LastProgress {
	case turn.KindNone:
		return ""
	case turn.KindPrompt:
		if t.LastStop == turn.StopUnclear {
			// Qwen Code 0.24.4's blocking UserPromptSubmit hook ends the
			// turn after the prompt's record with nothing else written.
			return "the last record is input at which the harness may end the turn without writing more; only the end record may be missing"
		}
		return ""
	case turn.KindToolResult:
		if t.EndsAfterCalls && len(t.Dangling()) == 0 {
			// Qwen Code 0.24.4 ends the turn after a batch with a
			// permission-cancelled call (stopAfterPermissionCancel): no
			// model call follows, so the answered batch is the turn's end
			// and only the end record may be missing.
			return "the last record answers a tool batch after which the harness ends the turn; only the end record may be missing"
		}
		return ""
	case turn.KindOutput:
		switch t.LastStop {
		case turn.StopOpen, turn.StopContinue:
			return ""
		case turn.StopFinal:
			return "the last record is a complete final answer; only the end record may be missing"
		}
		return "the last record is a complete model message that does not say whether the model meant to go on"
	}
	return ""
})
