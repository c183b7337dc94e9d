package dsh

import (
	"github.com/tailproof/tailproof/events"
)

// CodecName is the name the dsh codec registers under.
const CodecName = "dsh"

// Codec decodes dsh v1 session logs. It is stateless: physical line 1 is the
// session header (dsh writes it first, always), every other line is one
// event. Decode it with events.Options{RequireNewline: true}, which is dsh's
// rule that a final segment without a newline is torn even when it parses.
type Codec struct{}

// Name implements events.Codec.
func (Codec) Name() string { return CodecName }

// Stream implements events.Codec.
func (Codec) Stream() events.Stream { return events.StreamSessionLog }

// EventBody is the body of every dsh event: the verbatim record and its
// typed payload.
type EventBody struct {
	Record
	Payload Payload
}

// Describe is the body's stable one-line form: seq, then the payload.
func (b *EventBody) Describe() string {
	return "seq=" + itoa(b.Seq) + " " + b.Payload.Describe()
}

// HeaderKind is the Kind of the header line's event.
const HeaderKind events.Kind = "dsh.session"

// KindOf returns the Kind of an event type: "dsh.<type>".
func KindOf(typ string) events.Kind { return events.Kind("dsh." + typ) }

// DecodeLine implements events.Codec. An unknown event type decodes as a
// *Generic payload; a known type whose data has the wrong shape is an error
// wrapping ErrMalformedData (the line is then torn or corrupt by position).
func (Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	if line.Pos.Line == 1 {
		h, err := ParseHeader(line.Bytes)
		if err != nil {
			return dst, err
		}
		return append(dst, events.Event{
			Stream: events.StreamSessionLog, Pos: line.Pos,
			Time: events.Time{Ms: int64(h.CreatedAt), OK: h.CreatedAt == float64(int64(h.CreatedAt))},
			Kind: HeaderKind, Body: &h,
		}), nil
	}
	rec, err := ParseRecord(line.Bytes)
	if err != nil {
		return dst, err
	}
	p, err := DecodePayload(rec.Type, rec.Data)
	if err != nil {
		return dst, err
	}
	return append(dst, ToEvent(rec, p, line.Pos)), nil
}

// ToEvent wraps a record and its payload in the envelope.
func ToEvent(rec Record, p Payload, pos events.Position) events.Event {
	prov, origin := ProvenanceOf(p)
	return events.Event{
		Stream: events.StreamSessionLog, Pos: pos,
		Time:       events.Time{Ms: rec.Time, OK: true},
		Provenance: prov, Origin: origin,
		Kind: KindOf(rec.Type), Body: &EventBody{Record: rec, Payload: p},
	}
}

// ProvenanceOf says who produced an event. dsh records carry no provenance
// field; it is implied by the format (OriginStructural):
//   - user/message and steering/message: the person (real_user) when the
//     source is {kind:'user'}; a plugin or sub-agent source is host-injected
//     and classed system, so it is never resent as user intent;
//   - context/message and turn/start with an injection trigger: system;
//   - assistant/message, assistant/chunk and tool/call: the model;
//   - tool/result: tool_result.
//
// Boundary, usage and error events, and unknown types, have none.
func ProvenanceOf(p Payload) (events.Provenance, events.Origin) {
	switch p := p.(type) {
	case *UserMessage:
		return sourceProvenance(p.Source)
	case *SteeringMessage:
		return sourceProvenance(p.Source)
	case *ContextMessage:
		return events.ProvenanceSystem, events.OriginStructural
	case *TurnStart:
		if p.Trigger.Kind == "injection" {
			return events.ProvenanceSystem, events.OriginStructural
		}
	case *AssistantMessage, *AssistantChunk, *ToolCall:
		return events.ProvenanceAssistant, events.OriginStructural
	case *ToolResult:
		return events.ProvenanceToolResult, events.OriginStructural
	}
	return events.ProvenanceAbsent, events.OriginNone
}

func sourceProvenance(s Source) (events.Provenance, events.Origin) {
	if s.IsUser() {
		return events.ProvenanceRealUser, events.OriginStructural
	}
	return events.ProvenanceSystem, events.OriginStructural
}
