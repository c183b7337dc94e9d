package turnfold

import (
	"strconv"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// Turn is the evidence one turn left: everything a verdict needs, nothing
// more (no outputs, no tool payloads).
type Turn struct {
	// Index is the turn's 1-based position in the file.
	Index int
	// ID is the harness's turn id (Codex turn_id), else the opening prompt's
	// prompt id (Claude Code promptId), else its record uuid; "" when the
	// turn has none of these. Key never returns "".
	ID string
	// Mark is the name the turn's records gave it in the harness's turn
	// marks (KindTurnMark), "" when none did.
	Mark string
	// Explicit is true when a TurnStart act opened the turn. An implicit
	// turn was opened by a prompt or by model output.
	Explicit bool
	// Initiator is the source of the prompt that opened an implicit turn
	// (SourceUnknown when the turn was opened otherwise).
	Initiator turn.Source
	// Start and Last are the positions of the turn's first and last act.
	Start, Last events.Position
	// StartParent is the parent link of the turn's first record (of the
	// mark that named it, for a turn a mark named before its first
	// progress): what an end's Since must name.
	StartParent string

	Prompts []Prompt
	Calls   []Call

	// The end record, when the harness wrote one: how and why.
	HasEnd    bool
	End       turn.End
	EndReason string
	EndPos    events.Position
	// ForeignEnd is the id named by an end record that names another turn
	// (neither this one nor one already closed).
	ForeignEnd string

	// Interrupts are the interrupt markers inside the turn.
	Interrupts []Interrupt

	// The last progress act (prompt, output, reasoning, tool call, result
	// or proof that a tool ran): where the durable record of the turn's
	// work stops.
	LastProgress    turn.Kind
	LastStop        turn.Stop
	LastProgressPos events.Position
	// Outputs counts model output and reasoning acts.
	Outputs int
	// TrailingError is an error recorded after the last progress act;
	// TrailingRetry says it was a retry notice.
	TrailingError, TrailingRetry bool
	ErrorReason                  string

	// Damage inside the turn (corrupt or too-long lines), damage in the gap
	// just before it (which may have held its prompt), and a torn final
	// fragment discarded inside it.
	Damage       []events.Position
	DamageBefore []events.Position
	Torn         *events.Position
	// DamageAfter is damage after the turn's end that no later turn
	// claimed: it may have been the next prompt.
	DamageAfter []events.Position
	// ChainBreaks are records whose parent link names no earlier record.
	ChainBreaks []string
	// SeqProblems are breaks in the harness's sequence numbers.
	SeqProblems []string

	// EndsAfterCalls: a tool result said the harness ends the turn once its
	// batch is answered (Act.Stop StopFinal on a ToolResult).
	EndsAfterCalls bool

	Compactions int
	// Notes are facts worth printing that decide nothing.
	Notes []string
}

// Prompt is one input of the turn.
type Prompt struct {
	Source turn.Source
	Origin events.Origin
	Text   string
	Pos    events.Position
	ID     string // prompt id, when the harness writes one
	UUID   string
}

// Call is one tool call of the turn and what became of it.
type Call struct {
	ID, Name string
	Pos      events.Position
	// Result: its result reached the transcript (Failed: flagged an error).
	Result, Failed bool
	// Ran: the harness recorded that its side effect happened.
	Ran bool
}

// Interrupt is one interrupt marker.
type Interrupt struct {
	Pos    events.Position
	Reason string
}

// Key is the turn's identity for a ledger: ID, or "line:N" of its first act
// when the harness names none (files are append-only, so the line of a
// turn's first record is stable).
func (t *Turn) Key() string {
	if t.ID != "" {
		return t.ID
	}
	return "line:" + strconv.Itoa(t.Start.Line)
}

// Dangling lists the calls without a result.
func (t *Turn) Dangling() []Call {
	var out []Call
	for _, c := range t.Calls {
		if !c.Result {
			out = append(out, c)
		}
	}
	return out
}

// Evidence is what the verdict guards read: the turn and whether the
// writer is known to have moved past it.
type Evidence struct {
	Turn *Turn
	// Superseded: a later turn opened in the same file, so the writer moved
	// on from this one.
	Superseded bool
	// WriterStopped: the caller asserts that the process that wrote the file
	// is gone (the harness's own liveness check, a dead pid). Without it an
	// open final turn may still be running.
	WriterStopped bool
}

// Over reports whether nothing more will be written to this turn.
func (e *Evidence) Over() bool { return e.Superseded || e.WriterStopped }
