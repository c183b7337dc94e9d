package dsh

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
