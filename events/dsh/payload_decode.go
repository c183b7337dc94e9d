package dsh

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// NewRecord builds a record whose data is p serialized in dsh's key order.
func NewRecord(seq, time int64, p Payload) Record {
	return Record{Type: p.EventType(), Seq: seq, Time: time, Data: p.AppendJSON(nil)}
}

// DecodePayload decodes data as the v1 body of typ. Unknown types decode as
// *Generic and never fail; a known type with data of the wrong shape fails
// with ErrMalformedData. Absent optional members decode as zero values.
func DecodePayload(typ string, data json.RawMessage) (Payload, error) {
	p, ok := fastDecodePayload(typ, data)
	if !ok {
		return decodePayloadJSON(typ, data)
	}
	if err := validate(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedData, typ, err)
	}
	return p, nil
}

// decodePayloadJSON is DecodePayload through encoding/json: the reference
// the fast path must agree with, and the path that words every error.
func decodePayloadJSON(typ string, data json.RawMessage) (Payload, error) {
	var p Payload
	switch typ {
	case TypeTurnStart:
		p = new(TurnStart)
	case TypeTurnEnd:
		p = new(TurnEnd)
	case TypeStepStart:
		p = new(StepStart)
	case TypeStepEnd:
		p = new(StepEnd)
	case TypeUserMessage:
		p = new(UserMessage)
	case TypeContextMessage:
		p = new(ContextMessage)
	case TypeAssistantChunk:
		p = new(AssistantChunk)
	case TypeAssistantMessage:
		p = new(AssistantMessage)
	case TypeToolCall:
		p = new(ToolCall)
	case TypeToolResult:
		p = new(ToolResult)
	case TypeSteeringMessage:
		p = new(SteeringMessage)
	case TypeUsage:
		p = new(UsageEvent)
	case TypeError:
		p = new(ErrorEvent)
	default:
		return &Generic{Type: typ, Data: bytes.Clone(data)}, nil
	}
	if err := strictUnmarshal(data, p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedData, typ, err)
	}
	if err := validate(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedData, typ, err)
	}
	return p, nil
}

// validate checks the members the projections key on; everything else is
// only type-checked by the JSON decoder.
func validate(p Payload) error {
	switch p := p.(type) {
	case *TurnStart:
		if p.Trigger.Kind == "" {
			return fmt.Errorf("trigger has no kind")
		}
	case *TurnEnd:
		if p.Reason.Kind == "" {
			return fmt.Errorf("reason has no kind")
		}
	case *UserMessage:
		return validateBlocks(p.Content)
	case *ContextMessage:
		return validateBlocks(p.Content)
	case *SteeringMessage:
		return validateBlocks(p.Content)
	case *AssistantMessage:
		return validateBlocks(p.Content)
	case *ToolResult:
		if p.CallID == "" {
			return fmt.Errorf("no callId")
		}
		return validateBlocks(p.Content)
	case *ToolCall:
		if p.CallID == "" {
			return fmt.Errorf("no callId")
		}
	case *AssistantChunk:
		if p.Chunk.Type == "" {
			return fmt.Errorf("chunk has no type")
		}
	}
	return nil
}
