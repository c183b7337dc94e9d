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

func (s *scanner) message(content *[]Block, src *Source) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 2)
		case "content":
			s.blocksField(content, &set, 1, 2)
		case "source":
			s.seen(&set, 2)
			if s.open() {
				s.source(src, 2)
			}
		default:
			s.unknown(k, 2, "content", "source")
		}
	}
}

func (s *scanner) steeringMessage(v *SteeringMessage) {
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
		case "content":
			s.blocksField(&v.Content, &set, 2, 2)
		case "source":
			s.seen(&set, 4)
			if s.open() {
				s.source(&v.Source, 2)
			}
		default:
			s.unknown(k, 2, "turn", "content", "source")
		}
	}
}

func (s *scanner) assistantMessage(v *AssistantMessage) {
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
		case "step":
			s.intField(&v.Step, &set, 2)
		case "content":
			s.blocksField(&v.Content, &set, 4, 2)
		default:
			s.unknown(k, 2, "turn", "step", "content")
		}
	}
}

func (s *scanner) toolCall(v *ToolCall) {
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
		case "step":
			s.intField(&v.Step, &set, 2)
		case "callId":
			s.strField(&v.CallID, &set, 4)
		case "name":
			s.strField(&v.Name, &set, 8)
		case "arguments":
			s.strField(&v.Arguments, &set, 16)
		default:
			s.unknown(k, 2, "turn", "step", "callId", "name", "arguments")
		}
	}
}

func (s *scanner) toolResult(v *ToolResult) {
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
		case "step":
			s.intField(&v.Step, &set, 2)
		case "callId":
			s.strField(&v.CallID, &set, 4)
		case "content":
			s.blocksField(&v.Content, &set, 8, 2)
		case "isError":
			s.boolField(&v.IsError, &set, 16)
		case "error":
			s.seen(&set, 32)
			if s.open() {
				v.Error = new(ToolError)
				s.toolError(v.Error)
			}
		default:
			s.unknown(k, 2, "turn", "step", "callId", "content", "isError", "error")
		}
	}
}

func (s *scanner) toolError(v *ToolError) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 3)
		case "name":
			s.strField(&v.Name, &set, 1)
		case "code":
			s.strField(&v.Code, &set, 2)
		default:
			s.unknown(k, 3, "name", "code")
		}
	}
}

func (s *scanner) usageEvent(v *UsageEvent) {
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
		case "step":
			s.intField(&v.Step, &set, 2)
		case "usage":
			s.seen(&set, 4)
			if s.open() {
				s.usage(&v.Usage, 2)
			}
		default:
			s.unknown(k, 2, "turn", "step", "usage")
		}
	}
}

func (s *scanner) usage(v *Usage, depth int) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, depth+1)
		case "inputTokens":
			s.intField(&v.InputTokens, &set, 1)
		case "outputTokens":
			s.intField(&v.OutputTokens, &set, 2)
		case "cacheReadTokens":
			s.optIntField(&v.CacheReadTokens, &set, 4)
		case "cacheWriteTokens":
			s.optIntField(&v.CacheWriteTokens, &set, 8)
		case "reasoningTokens":
			s.optIntField(&v.ReasoningTokens, &set, 16)
		default:
			s.unknown(k, depth+1, "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
		}
	}
}

func (s *scanner) errorEvent(v *ErrorEvent) {
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
		case "step":
			s.intField(&v.Step, &set, 2)
		case "message":
			s.strField(&v.Message, &set, 4)
		case "code":
			s.optStrField(&v.Code, &set, 8)
		default:
			s.unknown(k, 2, "turn", "step", "message", "code")
		}
	}
}

func (s *scanner) assistantChunk(v *AssistantChunk) {
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
		case "step":
			s.intField(&v.Step, &set, 2)
		case "chunk":
			s.seen(&set, 4)
			if s.open() {
				s.chunk(&v.Chunk)
			}
		default:
			s.unknown(k, 2, "turn", "step", "chunk")
		}
	}
}

func (s *scanner) chunk(v *Chunk) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 3)
		case "type":
			s.strField(&v.Type, &set, 1)
		case "index":
			s.intField(&v.Index, &set, 2)
		case "blockType":
			s.strField(&v.BlockType, &set, 4)
		case "text":
			s.strField(&v.Text, &set, 8)
		case "id":
			s.strField(&v.ID, &set, 16)
		case "name":
			s.optStrField(&v.Name, &set, 32)
		case "argumentsDelta":
			s.strField(&v.ArgumentsDelta, &set, 64)
		case "block":
			s.seen(&set, 128)
			if s.open() {
				v.Block = new(Block)
				s.block(v.Block, 3)
			}
		case "usage":
			s.seen(&set, 256)
			if s.open() {
				v.Usage = new(Usage)
				s.usage(v.Usage, 3)
			}
		case "reason":
			s.seen(&set, 512)
			if s.open() {
				v.Reason = new(FinishReason)
				s.finishReason(v.Reason)
			}
		default:
			s.unknown(k, 3, "type", "index", "blockType", "text", "id", "name", "argumentsDelta", "block", "usage", "reason")
		}
	}
}

func (s *scanner) finishReason(v *FinishReason) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, 4)
		case "kind":
			s.strField(&v.Kind, &set, 1)
		case "message":
			s.optStrField(&v.Message, &set, 2)
		case "code":
			s.optStrField(&v.Code, &set, 4)
		default:
			s.unknown(k, 4, "kind", "message", "code")
		}
	}
}

// blocksField decodes a []Block member of an object at depth. An empty
// array is an empty, non-nil slice, as encoding/json makes it; a null
// element fails (it would decode as a typeless block, which is malformed).
func (s *scanner) blocksField(dst *[]Block, set *uint32, bit uint32, depth int) {
	s.seen(set, bit)
	switch s.peek() {
	case 'n':
		s.literal("null")
		return
	case '[':
		s.i++
	default:
		s.fail()
		return
	}
	out := []Block{}
	for first := true; s.element(&first); {
		if s.peek() != '{' {
			s.fail()
			return
		}
		s.i++
		out = append(out, Block{})
		s.block(&out[len(out)-1], depth+1)
	}
	*dst = out
}

func (s *scanner) block(v *Block, depth int) {
	var set uint32
	for first := true; ; {
		switch k := s.member(&first); string(k) {
		case "":
			if k == nil {
				return
			}
			s.unknown(k, depth+1)
		case "type":
			s.strField(&v.Type, &set, 1)
		case "text":
			s.strField(&v.Text, &set, 2)
		case "id":
			s.strField(&v.ID, &set, 4)
		case "name":
			s.strField(&v.Name, &set, 8)
		case "arguments":
			s.strField(&v.Arguments, &set, 16)
		case "toolCallId":
			s.strField(&v.ToolCallID, &set, 32)
		case "content":
			s.rawField((*[]byte)(&v.Content), &set, 64, depth+1)
		case "isError":
			s.optBoolField(&v.IsError, &set, 128)
		case "url":
			s.strField(&v.URL, &set, 256)
		case "mimeType":
			s.optStrField(&v.MimeType, &set, 512)
		case "cache":
			s.rawField((*[]byte)(&v.Cache), &set, 1024, depth+1)
		default:
			s.unknown(k, depth+1, "type", "text", "id", "name", "arguments", "toolCallId", "content", "isError", "url", "mimeType", "cache")
		}
	}
}
