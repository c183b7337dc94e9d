package turns

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events/dsh"
)

// InterruptedText is the text of the synthetic result dsh's repair gives a
// tool call that never got one.
const InterruptedText = "Tool call interrupted by a crash; no result was recorded."

// ErrorName and ErrorCode label that synthetic result's error.
const (
	ErrorName = "InterruptedError"
	ErrorCode = "interrupted"
)

// Pending is a tool call the model asked for (a tool-call block of an
// assistant/message) that has no tool/result yet.
type Pending struct {
	CallID string
	Step   int64
}

// Enclosure is the turn-enclosure fold of a dsh log: which turn and step are
// open and which tool calls are unanswered. It mirrors the scan of dsh's
// interruptedTurnClosers (deepseek-dsh.md §2.4) exactly, including its quirks:
//   - the open step is cleared by step/end and turn/end, not by turn/start;
//   - pending calls come from assistant/message tool-call blocks only (a
//     tool/call event is not consulted), are cleared by turn/start and
//     turn/end, and keep first-insertion order when an id repeats (a JS Map).
//
// The zero value is an empty log. Apply is incremental: folding a log in any
// number of pieces gives the same state as folding it at once.
type Enclosure struct {
	turn, step         int64
	turnOpen, stepOpen bool
	pending            []Pending
	index              map[string]int // callId -> position in pending
	n                  int
	lastSeq, lastTime  int64
	err                error
}

// Apply folds one record. Only boundary, assistant/message and tool/result
// records are decoded; a malformed one of those makes the fold fail closed:
// the error is returned now and by every later Closers call, because closers
// computed from a boundary we could not read could be wrong.
func (e *Enclosure) Apply(r dsh.Record) error {
	if e.err != nil {
		return e.err
	}
	e.n++
	e.lastSeq, e.lastTime = r.Seq, r.Time
	switch r.Type {
	case dsh.TypeTurnStart, dsh.TypeTurnEnd, dsh.TypeStepStart, dsh.TypeStepEnd,
		dsh.TypeAssistantMessage, dsh.TypeToolResult:
	default:
		return nil
	}
	p, err := dsh.DecodePayload(r.Type, r.Data)
	if err != nil {
		e.err = fmt.Errorf("turns: seq %d: cannot read %s: %w", r.Seq, r.Type, err)
		return e.err
	}
	switch p := p.(type) {
	case *dsh.TurnStart:
		e.turn, e.turnOpen = p.Turn, true
		e.clearPending()
	case *dsh.TurnEnd:
		e.turnOpen, e.stepOpen = false, false
		e.clearPending()
	case *dsh.StepStart:
		e.step, e.stepOpen = p.Step, true
	case *dsh.StepEnd:
		e.stepOpen = false
	case *dsh.AssistantMessage:
		for _, b := range p.Content {
			if b.Type != "tool-call" {
				continue
			}
			if i, ok := e.index[b.ID]; ok {
				e.pending[i].Step = p.Step // Map.set on an existing key keeps its position
				continue
			}
			if e.index == nil {
				e.index = map[string]int{}
			}
			e.index[b.ID] = len(e.pending)
			e.pending = append(e.pending, Pending{CallID: b.ID, Step: p.Step})
		}
	case *dsh.ToolResult:
		if i, ok := e.index[p.CallID]; ok {
			e.pending = append(e.pending[:i], e.pending[i+1:]...)
			delete(e.index, p.CallID)
			for j := i; j < len(e.pending); j++ {
				e.index[e.pending[j].CallID] = j
			}
		}
	}
	return nil
}

func (e *Enclosure) clearPending() {
	e.pending = e.pending[:0]
	clear(e.index)
}

// OpenTurn returns the open turn's number.
func (e *Enclosure) OpenTurn() (int64, bool) { return e.turn, e.turnOpen }

// OpenStep returns the open step's number.
func (e *Enclosure) OpenStep() (int64, bool) { return e.step, e.stepOpen }

// Pending returns the unanswered tool calls in the order they were asked for.
func (e *Enclosure) Pending() []Pending { return append([]Pending(nil), e.pending...) }

// Len is the number of records folded.
func (e *Enclosure) Len() int { return e.n }

// Err is the first malformed-record error, if any.
func (e *Enclosure) Err() error { return e.err }

// Balanced reports whether the log needs no closers.
func (e *Enclosure) Balanced() bool { return e.err == nil && (e.n == 0 || !e.turnOpen) }

// Closers returns the records dsh's crash repair appends to close the open
// turn, or none when the log is empty or no turn is open:
//  1. for each pending call, in order, an error tool/result
//     {turn, step, callId, content:[text InterruptedText], isError:true,
//     error:{name:'InterruptedError', code:'interrupted'}};
//  2. step/end {turn, step} when a step is open;
//  3. turn/end {turn, reason:{kind:'interrupted'}}.
//
// Seqs continue from the last folded record and every time is the last
// record's time, so repair never invents a later time than the evidence.
func (e *Enclosure) Closers() ([]dsh.Record, error) {
	if e.err != nil {
		return nil, e.err
	}
	if e.n == 0 || !e.turnOpen {
		return nil, nil
	}
	out := make([]dsh.Record, 0, len(e.pending)+2)
	seq := e.lastSeq + 1
	add := func(p dsh.Payload) {
		out = append(out, dsh.NewRecord(seq, e.lastTime, p))
		seq++
	}
	for _, c := range e.pending {
		add(&dsh.ToolResult{
			Turn: e.turn, Step: c.Step, CallID: c.CallID,
			Content: []dsh.Block{{Type: "text", Text: InterruptedText}},
			IsError: true,
			Error:   &dsh.ToolError{Name: ErrorName, Code: ErrorCode},
		})
	}
	if e.stepOpen {
		add(&dsh.StepEnd{Turn: e.turn, Step: e.step})
	}
	add(&dsh.TurnEnd{Turn: e.turn, Reason: dsh.Reason{Kind: "interrupted"}})
	return out, nil
}

// Describe prints the fold's state on one stable line.
func (e *Enclosure) Describe() string {
	var b strings.Builder
	b.WriteString("events=" + strconv.Itoa(e.n))
	if e.turnOpen {
		b.WriteString(" turn=" + strconv.FormatInt(e.turn, 10))
	} else {
		b.WriteString(" turn=closed")
	}
	if e.stepOpen {
		b.WriteString(" step=" + strconv.FormatInt(e.step, 10))
	} else {
		b.WriteString(" step=closed")
	}
	b.WriteString(" pending=[")
	for i, p := range e.pending {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.CallID + "@" + strconv.FormatInt(p.Step, 10))
	}
	b.WriteByte(']')
	if e.err != nil {
		b.WriteString(" err=" + e.err.Error())
	}
	return b.String()
}

// Closers folds recs and returns the records that close its open turn: the
// pure equivalent of dsh's interruptedTurnClosers.
func Closers(recs []dsh.Record) ([]dsh.Record, error) {
	var e Enclosure
	for _, r := range recs {
		if err := e.Apply(r); err != nil {
			return nil, err
		}
	}
	return e.Closers()
}
