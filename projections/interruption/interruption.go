package interruption

import (
	"bytes"
	"math"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
)

// TailCount is TURN_INTERRUPTION_HISTORY_TAIL_COUNT: how many history
// entries before the trimmed notification run a classification reads.
const TailCount = 50

// Kind is the verdict of detectTurnInterruption.
type Kind uint8

const (
	KindNone              Kind = iota // the history ends in a settled state (or cannot be told apart from one)
	KindInterruptedPrompt             // user input the model never answered
	KindInterruptedTurn               // model tool calls with no results
)

func (k Kind) String() string {
	switch k {
	case KindInterruptedPrompt:
		return "interrupted_prompt"
	case KindInterruptedTurn:
		return "interrupted_turn"
	}
	return "none"
}

// Part is a part of an interrupted prompt together with the record it came
// from.
type Part struct {
	qwen.Part
	Source apihistory.Source
}

// Call is a dangling tool call: a model functionCall with an id and no
// result.
type Call struct {
	ID     string
	Name   string
	Source apihistory.Source
}

// Verdict is the classification of a history tail.
type Verdict struct {
	Kind Kind
	// Parts of an interrupted prompt: every functionResponse first, then the
	// other parts, each group in history order (a continuation resends them
	// in this order).
	Parts []Part
	// DanglingCalls of an interrupted turn, in part order.
	DanglingCalls []Call
}

// Describe is the verdict's stable text form, one part or call per line.
func (v Verdict) Describe() string {
	var b strings.Builder
	b.WriteString(v.Kind.String())
	for _, p := range v.Parts {
		b.WriteString("\n  ")
		b.WriteString(apihistory.DescribePart(p.Part))
		describeSource(&b, p.Source)
	}
	for _, c := range v.DanglingCalls {
		b.WriteString("\n  call ")
		b.WriteString(c.ID)
		b.WriteByte(' ')
		b.WriteString(c.Name)
		describeSource(&b, c.Source)
	}
	return b.String()
}

func describeSource(b *strings.Builder, s apihistory.Source) {
	if s.UUID == "" && s.Origin == events.OriginNone {
		return
	}
	b.WriteString(" <- ")
	b.WriteString(s.UUID)
	if s.Origin != events.OriginNone {
		b.WriteString(" (" + s.Provenance.String() + ")")
	}
}

// completedBoundary is completedToolCallBoundary: the index just after the
// single user entry holding a completed goal call's result, so nothing at or
// before a finished goal turn is ever reported as interrupted.
func completedBoundary(h []apihistory.Entry, ids []string) int {
	if len(ids) == 0 {
		return 0
	}
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	bound := map[string]int{}
	for i := range h {
		for _, p := range h[i].Content.Parts {
			if p.Kind != qwen.PartFunctionResponse || !p.HasID || p.ID == "" {
				continue
			}
			if _, ok := set[p.ID]; !ok {
				continue
			}
			_, seen := bound[p.ID]
			if seen || h[i].Content.Role != "user" {
				bound[p.ID] = 0
			} else {
				bound[p.ID] = i + 1
			}
		}
	}
	m := 0
	for _, b := range bound {
		m = max(m, b)
	}
	return m
}

// EffectiveHistoryEnd is effectiveHistoryEnd: the history length with the
// trailing notification-shaped user entries trimmed. A non-nil trailing
// count narrows the trim to that many final entries (it never widens it);
// nil trims by shape alone.
func EffectiveHistoryEnd(h []apihistory.Entry, trailing *int) int {
	end := len(h)
	from := math.MinInt / 2 // no bound: -1<<62 where an int is 64 bits
	if trailing != nil {
		from = len(h) - *trailing
	}
	for end > 0 && apihistory.IsSystemNotificationContent(h[end-1].Content) {
		if end-1 < from {
			break
		}
		end--
	}
	return end
}

// Detect is detectTurnInterruption over api-history entries (oldest first;
// callers pass a tail). trailing is the accumulator's
// trailingSystemNotifications, or nil for the shape-only trim. The input is
// never modified and the verdict shares no memory with it.
func Detect(h []apihistory.Entry, completedToolCallIDs []string, trailing *int) Verdict {
	boundary := completedBoundary(h, completedToolCallIDs)
	end := EffectiveHistoryEnd(h, trailing)
	if boundary >= end || end == 0 {
		return Verdict{}
	}
	last := &h[end-1]
	switch last.Content.Role {
	case "user":
		// The walk starts at the real end: notifications trimmed above are
		// still part of what the user would have sent.
		first := len(h)
		for i := len(h) - 1; i >= boundary; i-- {
			if h[i].Content.Role != "user" || apihistory.IsSystemReminderContent(h[i].Content) {
				break
			}
			first = i
		}
		var responses, others []Part
		for i := first; i < len(h); i++ {
			e := &h[i]
			for j, p := range e.Content.Parts {
				part := Part{Part: clonePart(p), Source: partSource(e, j)}
				if p.Kind == qwen.PartFunctionResponse {
					responses = append(responses, part)
				} else {
					others = append(others, part)
				}
			}
		}
		parts := append(responses, others...)
		if len(parts) == 0 {
			return Verdict{}
		}
		return Verdict{Kind: KindInterruptedPrompt, Parts: parts}
	case "model":
		var calls []Call
		for j, p := range last.Content.Parts {
			if p.Kind != qwen.PartFunctionCall || !p.HasID || p.ID == "" {
				continue
			}
			name := "unknown"
			if p.HasName {
				name = p.Name
			}
			calls = append(calls, Call{ID: p.ID, Name: name, Source: partSource(last, j)})
		}
		if len(calls) > 0 {
			return Verdict{Kind: KindInterruptedTurn, DanglingCalls: calls}
		}
	}
	return Verdict{}
}

func partSource(e *apihistory.Entry, j int) apihistory.Source {
	if j < len(e.PartSource) && e.PartSource[j] < len(e.Sources) {
		return e.Sources[e.PartSource[j]]
	}
	if len(e.Sources) > 0 {
		return e.Sources[0]
	}
	return apihistory.Source{}
}

func clonePart(p qwen.Part) qwen.Part {
	p.Raw = bytes.Clone(p.Raw)
	return p
}

// SyntheticToolResponses is buildSyntheticToolResponseParts: one error
// functionResponse per dangling call, in order, with the JSON bytes a
// continuation sends in Raw.
func SyntheticToolResponses(calls []Call, reason string) []qwen.Part {
	out := make([]qwen.Part, 0, len(calls))
	for _, c := range calls {
		raw := []byte(`{"functionResponse":{"id":`)
		raw = appendJSON(raw, c.ID)
		raw = append(raw, `,"name":`...)
		raw = appendJSON(raw, c.Name)
		raw = append(raw, `,"response":{"error":`...)
		raw = appendJSON(raw, reason)
		raw = append(raw, "}}}"...)
		out = append(out, qwen.Part{
			Kind: qwen.PartFunctionResponse,
			ID:   c.ID, HasID: true,
			Name: c.Name, HasName: true,
			Raw: raw,
		})
	}
	return out
}

// appendJSON writes s as JSON.stringify would (no HTML escaping, so the
// bytes match what the reference sends).
func appendJSON(dst []byte, s string) []byte { return events.AppendJSString(dst, s) }
