package dsh

import (
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh/internal/dshact"
	"github.com/tailproof/tailproof/events/turn"
)

// Harness is dsh v1 session logs for turn.Read: this codec, this mapper,
// and dsh's framing (a final segment without a newline is torn even when it
// parses). It lets `tailproof status --harness dsh` give the same turn
// object as Codex and Claude Code; dsh's own load repair stays in
// projections/turns (the enclosure the mapping is checked against).
func Harness() turn.Harness {
	return turn.Harness{Name: "dsh", Codec: Codec{}, Mapper: Mapper{}, Options: events.Options{RequireNewline: true}}
}

// Mapper maps dsh v1 events onto the vocabulary (ADR 0018's table, checked
// against dsh's own turn enclosure, deepseek-dsh.md §2.4, by
// simulations' TestDSHTurnsAgreeWithEnclosure):
//
//	session header                 session
//	turn/start                     turn-start (turn id = the turn number)
//	turn/end                       turn-end: completed, max-tokens → completed;
//	                               aborted, interrupted → interrupted (kind,
//	                               or aborted's reason, as the reason); error
//	                               → failed (its message); disposed → cancelled
//	user/message                   prompt: source user → user, plugin →
//	                               hook, agent → agent, else unknown
//	steering/message               the same, steered into the running turn
//	context/message                prompt, injected
//	assistant/chunk                output still streaming (finish chunks are
//	                               notes: the message record follows)
//	assistant/message              a tool-call act per tool-call block, then
//	                               output: continue when it asked for a tool,
//	                               else unclear (dsh records the finish reason
//	                               only in the chunk before)
//	tool/call                      note: the call's assistant/message block
//	                               opened it (ADR 0018 lists tool-call; the
//	                               fold would then count the call twice)
//	tool/result                    tool-result (failed when isError)
//	step/start, step/end, usage    note
//	error                          error
//	unknown types                  unknown
type Mapper struct{}

// Map implements turn.Mapper.
func (Mapper) Map(dst []turn.Act, ev events.Event) []turn.Act {
	a := turn.Act{Pos: ev.Pos, Time: ev.Time, Native: ev.Kind}
	if _, ok := ev.Body.(*Header); ok {
		a.Kind = turn.KindSession
		return append(dst, a)
	}
	b, ok := ev.Body.(*EventBody)
	if !ok {
		return dst
	}
	a.Seq, a.HasSeq = b.Seq, true
	switch p := b.Payload.(type) {
	case *TurnStart:
		a.Kind, a.Turn = turn.KindTurnStart, turnID(p.Turn)
	case *TurnEnd:
		a.Kind, a.Turn = turn.KindTurnEnd, turnID(p.Turn)
		a.End, a.Reason = endOf(p.Reason)
	case *UserMessage:
		promptAct(&a, p.Content, p.Source)
	case *SteeringMessage:
		promptAct(&a, p.Content, p.Source)
		a.Turn, a.Steer = turnID(p.Turn), true
	case *ContextMessage:
		a.Kind, a.Source, a.Origin, a.Text = turn.KindPrompt, turn.SourceInjected, events.OriginStructural, text(p.Content)
	case *AssistantChunk:
		a.Turn, a.Message = turnID(p.Turn), messageID(p.Turn, p.Step)
		switch p.Chunk.Type {
		case "finish", "usage":
			a.Kind = turn.KindNote
		case "reasoning-delta", "reasoning-start", "reasoning-end":
			a.Kind, a.Stop = turn.KindReasoning, turn.StopOpen
		default:
			a.Kind, a.Stop = turn.KindOutput, turn.StopOpen
		}
	case *AssistantMessage:
		a.Turn, a.Message = turnID(p.Turn), messageID(p.Turn, p.Step)
		a.Kind, a.Stop = turn.KindOutput, turn.StopUnclear
		for _, bl := range p.Content {
			if bl.Type != "tool-call" {
				continue
			}
			c := a
			c.Kind, c.Call, c.Name, c.Stop = turn.KindToolCall, bl.ID, bl.Name, turn.StopOpen
			dst = append(dst, c)
			a.Stop = turn.StopContinue
		}
	case *ToolCall:
		// The call was opened by its assistant/message block; a second
		// tool-call act under the same id would be folded as a second call.
		a.Kind, a.Turn, a.Call, a.Name = turn.KindNote, turnID(p.Turn), p.CallID, p.Name
	case *ToolResult:
		a.Kind, a.Turn, a.Call, a.Failed = turn.KindToolResult, turnID(p.Turn), p.CallID, p.IsError
	case *StepStart, *StepEnd, *UsageEvent:
		a.Kind = turn.KindNote
	case *ErrorEvent:
		a.Kind, a.Turn, a.Reason = turn.KindError, turnID(p.Turn), p.Message
	default:
		a.Kind = turn.KindUnknown
	}
	return append(dst, a)
}

func turnID(n int64) string { return strconv.FormatInt(n, 10) }

func messageID(t, s int64) string { return dshact.MessageID(turnID(t), strconv.FormatInt(s, 10)) }

func promptAct(a *turn.Act, content []Block, s Source) { dshact.Prompt(a, text(content), s.Kind) }

func text(content []Block) string {
	var b strings.Builder
	for _, bl := range content {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// endOf maps v1's reason with the shared table; v1's seed format has no
// blocked kind, so it stays unstated there.
func endOf(r Reason) (turn.End, string) {
	d := dshact.Reason{Kind: r.Kind}
	if r.Message != nil {
		d.Message, d.HasMessage = *r.Message, true
	}
	if r.Reason != nil {
		d.Why, d.HasWhy = *r.Reason, true
	}
	return dshact.End(d)
}
