package dsh

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
