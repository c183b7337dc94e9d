package dsh

// Hand-written decoders of the v1 payload structs for the fast path (see
// scanner). Each mirrors the struct's json tags: a member named by a tag is
// decoded into its field, null leaves the field at its zero value, any other
// member is validated and skipped.

// fastDecodePayload decodes data as the known type typ; ok is false for an
// unknown type or when the encoding/json path must decide.
func fastDecodePayload(typ string, data []byte) (Payload, bool) {
	s := scanner{b: data}
	if s.peek() != '{' {
		return nil, false
	}
	s.i++
	var p Payload
	switch typ {
	case TypeTurnStart:
		v := new(TurnStart)
		s.turnStart(v)
		p = v
	case TypeTurnEnd:
		v := new(TurnEnd)
		s.turnEnd(v)
		p = v
	case TypeStepStart:
		v := new(StepStart)
		s.turnStep(&v.Turn, &v.Step)
		p = v
	case TypeStepEnd:
		v := new(StepEnd)
		s.turnStep(&v.Turn, &v.Step)
		p = v
	case TypeUserMessage:
		v := new(UserMessage)
		s.message(&v.Content, &v.Source)
		p = v
	case TypeContextMessage:
		v := new(ContextMessage)
		s.message(&v.Content, &v.Source)
		p = v
	case TypeAssistantChunk:
		v := new(AssistantChunk)
		s.assistantChunk(v)
		p = v
	case TypeAssistantMessage:
		v := new(AssistantMessage)
		s.assistantMessage(v)
		p = v
	case TypeToolCall:
		v := new(ToolCall)
		s.toolCall(v)
		p = v
	case TypeToolResult:
		v := new(ToolResult)
		s.toolResult(v)
		p = v
	case TypeSteeringMessage:
		v := new(SteeringMessage)
		s.steeringMessage(v)
		p = v
	case TypeUsage:
		v := new(UsageEvent)
		s.usageEvent(v)
		p = v
	case TypeError:
		v := new(ErrorEvent)
		s.errorEvent(v)
		p = v
	default:
		return nil, false
	}
	s.end()
	if s.bad {
		return nil, false
	}
	return p, true
}

// The member loops below run inside an object whose '{' is consumed; depth
// is that object's nesting (1 for the payload itself).

func (s *scanner) turnStart(v *TurnStart) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 2)
		case "turn":
			s.intField(&v.Turn, &set, 1)
		case "trigger":
			s.seen(&set, 2)
			if s.open() {
				s.trigger(&v.Trigger)
			}
		default:
			s.unknown(k, 2, "turn", "trigger")
		}
	}
}

func (s *scanner) trigger(v *Trigger) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 3)
		case "kind":
			s.strField(&v.Kind, &set, 1)
		case "source":
			s.seen(&set, 2)
			if s.open() {
				v.Source = new(Source)
				s.source(v.Source, 3)
			}
		default:
			s.unknown(k, 3, "kind", "source")
		}
	}
}

func (s *scanner) source(v *Source, depth int) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, depth+1)
		case "kind":
			s.strField(&v.Kind, &set, 1)
		case "plugin":
			s.strField(&v.Plugin, &set, 2)
		case "agentId":
			s.strField(&v.AgentID, &set, 4)
		default:
			s.unknown(k, depth+1, "kind", "plugin", "agentId")
		}
	}
}

func (s *scanner) turnEnd(v *TurnEnd) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 2)
		case "turn":
			s.intField(&v.Turn, &set, 1)
		case "reason":
			s.seen(&set, 2)
			if s.open() {
				s.reason(&v.Reason)
			}
		default:
			s.unknown(k, 2, "turn", "reason")
		}
	}
}

func (s *scanner) reason(v *Reason) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 3)
		case "kind":
			s.strField(&v.Kind, &set, 1)
		case "reason":
			s.optStrField(&v.Reason, &set, 2)
		case "message":
			s.optStrField(&v.Message, &set, 4)
		case "code":
			s.optStrField(&v.Code, &set, 8)
		default:
			s.unknown(k, 3, "kind", "reason", "message", "code")
		}
	}
}

func (s *scanner) turnStep(turn, step *int64) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 2)
		case "turn":
			s.intField(turn, &set, 1)
		case "step":
			s.intField(step, &set, 2)
		default:
			s.unknown(k, 2, "turn", "step")
		}
	}
}
