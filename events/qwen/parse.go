package qwen

import (
	"math"
	"strconv"
)

// parsed is one JSON object found on a line, decoded as a chat record, with
// what Qwen's validator looks at kept apart from the Record.
type parsed struct {
	rec   *Record
	start int // byte offset of the object within the line
	end   int
	// JSON kinds of the fields validateTranscriptRecord checks.
	uuid, parent, session, typ, timestamp, subtype, message, parts jkind
}

// recordParser holds the scanner and options of one decoder. It is not safe
// for concurrent use; the Codec makes one per DecodeLine call.
type recordParser struct {
	s    scanner
	opts DecodeOptions
	// light skips message parts and payloads: pass 1 of LoadChain only
	// needs identity, type, subtype and timestamp.
	light bool
}

// parseObject decodes the object starting at b[start] (no leading
// whitespace) into a record; the object must end exactly at len(b) when
// whole is set. It returns nil on any syntax error.
func (p *recordParser) parseObject(b []byte, whole bool) (*parsed, error) {
	p.s.reset(b)
	s := &p.s
	var (
		f struct {
			uuid, parent, session, typ, timestamp, subtype, provenance span
			promptID, daemonPromptID, cwd, delivered, background       span
			payload, goal                                              span
		}
		msg      *Content
		msgKind  jkind
		partKind jkind
	)
	rec := &Record{}
	ok := s.object(func(k []byte) bool {
		var dst *span
		switch string(k) {
		case "uuid":
			dst = &f.uuid
		case "parentUuid":
			dst = &f.parent
		case "sessionId":
			dst = &f.session
		case "timestamp":
			dst = &f.timestamp
		case "type":
			dst = &f.typ
		case "subtype":
			dst = &f.subtype
		case "provenance":
			dst = &f.provenance
		case "promptId":
			dst = &f.promptID
		case "daemonPromptId":
			dst = &f.daemonPromptID
		case "cwd":
			dst = &f.cwd
		case "deliveredTurn":
			dst = &f.delivered
		case "backgroundTurn":
			dst = &f.background
		case "systemPayload":
			dst = &f.payload
		case "goalContext":
			dst = &f.goal
		case "message":
			// Decoded in place: the message holds the bulk of the bytes
			// and must be scanned once. A later duplicate key wins, as in
			// JSON.parse.
			msg, msgKind, partKind = nil, jAbsent, jAbsent
			if s.peek() != '{' {
				sp, ok := s.value()
				msgKind = sp.kind
				return ok
			}
			msgKind = jObject
			var ok bool
			msg, partKind, ok = p.content(p.light)
			return ok
		default:
			_, ok := s.value()
			return ok
		}
		sp, ok := s.value()
		*dst = sp
		return ok
	})
	if !ok {
		return nil, s.err
	}
	if whole {
		s.ws()
		if s.i != len(b) {
			return nil, &syntaxError{msg: "unexpected data after the record", off: s.i}
		}
	}
	str := func(sp span) string {
		if sp.kind != jString {
			return ""
		}
		return spanString(b, sp)
	}
	rec.UUID = str(f.uuid)
	rec.ParentUUID = str(f.parent)
	rec.ParentNull = f.parent.kind == jNull
	rec.SessionID = str(f.session)
	rec.Type = str(f.typ)
	rec.Subtype = str(f.subtype)
	rec.HasSubtype = f.subtype.kind == jString
	rec.Cwd = str(f.cwd)
	if f.timestamp.kind == jString {
		rec.Timestamp = str(f.timestamp)
		rec.TimeMs, rec.TimeOK = ParseTime(rec.Timestamp)
	}
	pr := &parsed{rec: rec, end: s.i,
		uuid: f.uuid.kind, parent: f.parent.kind, session: f.session.kind, typ: f.typ.kind,
		timestamp: f.timestamp.kind, subtype: f.subtype.kind, message: msgKind, parts: partKind}
	if msgKind == jObject {
		rec.Message = msg
	}
	if p.light {
		return pr, nil
	}
	rec.Provenance = str(f.provenance)
	rec.PromptID = str(f.promptID)
	if d := str(f.daemonPromptID); len(jsTrim([]byte(d))) > 0 {
		rec.DaemonPromptID = d
	}
	rec.DeliveredTurn = f.delivered.kind == jTrue
	rec.HasBackground = f.background.kind != jAbsent && f.background.kind != jNull
	if f.goal.kind == jObject {
		rec.GoalContext = p.goalContext(b, f.goal)
	}
	if f.payload.kind == jObject && rec.HasSubtype {
		p.payload(rec, b, f.payload)
	}
	return pr, nil
}

// content decodes a Gemini Content object at s.i. With light set the parts
// are validated and counted but not decoded.
func (p *recordParser) content(light bool) (*Content, jkind, bool) {
	s := &p.s
	c := &Content{}
	partsKind := jAbsent
	ok := s.object(func(k []byte) bool {
		switch string(k) {
		case "role":
			sp, ok := s.value()
			c.Role = ""
			if ok && sp.kind == jString {
				c.Role = spanString(s.b, sp)
			}
			return ok
		case "parts":
			c.Parts = nil
			if s.peek() != '[' {
				sp, ok := s.value()
				partsKind = sp.kind
				return ok
			}
			partsKind = jArray
			if light {
				_, ok := s.value()
				return ok
			}
			c.Parts = []Part{}
			return s.array(func() bool {
				part, ok := p.part()
				c.Parts = append(c.Parts, part)
				return ok
			})
		}
		_, ok := s.value()
		return ok
	})
	return c, partsKind, ok
}

// part decodes one element of a parts array.
func (p *recordParser) part() (Part, bool) {
	s := &p.s
	var pt Part
	if s.peek() != '{' {
		sp, ok := s.value()
		if ok && p.opts.KeepPayloads {
			pt.Raw = append([]byte(nil), s.b[sp.start:sp.end]...)
		}
		return pt, ok
	}
	start := s.i
	var (
		fc, fr, inline, file, thought span
		fcID, fcName, frID, frName    span
		sawText, sawOther             bool
	)
	ok := s.object(func(k []byte) bool {
		var dst *span
		if string(k) != "text" {
			sawOther = true
		}
		switch string(k) {
		case "text":
			sawText = true
			sp, ok := s.value()
			pt.Text, pt.HasText = "", false
			if ok && sp.kind == jString {
				pt.Text, pt.HasText = spanString(s.b, sp), true
			}
			return ok
		case "thought":
			dst = &thought
		case "functionCall", "functionResponse":
			isCall := string(k) == "functionCall"
			id, name := &frID, &frName
			sp := &fr
			if isCall {
				id, name, sp = &fcID, &fcName, &fc
			}
			*id, *name = span{}, span{}
			if s.peek() != '{' {
				v, ok := s.value()
				*sp = v
				return ok
			}
			sp.start, sp.kind = s.i, jObject
			ok := s.object(func(k []byte) bool {
				switch string(k) {
				case "id":
					v, ok := s.value()
					*id = v
					return ok
				case "name":
					v, ok := s.value()
					*name = v
					return ok
				}
				_, ok := s.value()
				return ok
			})
			sp.end = s.i
			return ok
		case "inlineData":
			dst = &inline
		case "fileData":
			dst = &file
		}
		if dst == nil {
			_, ok := s.value()
			return ok
		}
		v, ok := s.value()
		*dst = v
		return ok
	})
	if !ok {
		return pt, false
	}
	pt.OnlyText = sawText && !sawOther
	pt.Thought = truthySpan(s.b, thought)
	idName := func(id, name span) {
		if id.kind == jString {
			pt.ID, pt.HasID = spanString(s.b, id), true
		}
		if name.kind == jString {
			pt.Name, pt.HasName = spanString(s.b, name), true
		}
	}
	switch {
	case truthySpan(s.b, fc):
		pt.Kind = PartFunctionCall
		idName(fcID, fcName)
	case truthySpan(s.b, fr):
		pt.Kind = PartFunctionResponse
		idName(frID, frName)
	case truthySpan(s.b, inline):
		pt.Kind = PartInlineData
	case truthySpan(s.b, file):
		pt.Kind = PartFileData
	case pt.HasText:
		pt.Kind = PartText
	}
	if p.opts.KeepPayloads {
		pt.Raw = append([]byte(nil), s.b[start:s.i]...)
	}
	return pt, true
}

// sub runs f with the scanner positioned over b[sp.start:sp.end], restoring
// the outer scan state afterwards. The range was validated already.
func (p *recordParser) sub(b []byte, sp span, f func(s *scanner)) {
	saved := p.s
	p.s.reset(b[:sp.end])
	p.s.i = sp.start
	f(&p.s)
	stack, tmp := p.s.stack, p.s.tmp
	p.s = saved
	p.s.stack, p.s.tmp = stack, tmp
}

// fields collects the spans of the named members of the object at s.i.
// Later duplicates win, as in JSON.parse.
func fields(s *scanner, names []string, out []span) {
	s.object(func(k []byte) bool {
		for i, n := range names {
			if string(k) == n {
				v, ok := s.value()
				out[i] = v
				return ok
			}
		}
		_, ok := s.value()
		return ok
	})
}

func (p *recordParser) goalContext(b []byte, sp span) *GoalContext {
	g := &GoalContext{}
	p.sub(b, sp, func(s *scanner) {
		var v [3]span
		fields(s, []string{"goalId", "revision", "turnId"}, v[:])
		if v[0].kind == jString {
			g.GoalID, g.HasGoalID = spanString(b, v[0]), true
		}
		if v[2].kind == jString {
			g.TurnID, g.HasTurnID = spanString(b, v[2]), true
		}
		g.Revision, g.RevisionIsInteger, g.RevisionComparable = revisionText(b, v[1])
	})
	return g
}

// revisionText renders a revision so that equal text means JavaScript ===:
// numbers canonically (1, 1.0 and 1e0 are one value; -0 is 0), strings
// quoted (so "1" differs from 1), literals as written.
func revisionText(b []byte, sp span) (text string, integer, comparable bool) {
	switch sp.kind {
	case jNumber:
		f, _ := strconv.ParseFloat(string(b[sp.start:sp.end]), 64)
		if f == 0 {
			f = 0
		}
		integer = !math.IsInf(f, 0) && f == math.Trunc(f)
		return strconv.FormatFloat(f, 'g', -1, 64), integer, true
	case jString:
		return strconv.Quote(spanString(b, sp)), false, true
	case jNull, jTrue, jFalse:
		return string(b[sp.start:sp.end]), false, true
	}
	return "", false, false
}

func (p *recordParser) payload(r *Record, b []byte, sp span) {
	str := func(v span) string {
		if v.kind != jString {
			return ""
		}
		return spanString(b, v)
	}
	switch r.Subtype {
	case SubtypeChatCompression:
		c := &Compression{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"compressedHistory", "completedToolCallIds"}, v[:])
			c.HasHistory = truthySpan(b, v[0])
			if v[0].kind == jArray {
				s.i = v[0].start
				s.array(func() bool {
					if s.peek() == '{' {
						ct, _, ok := p.content(false)
						if ok {
							c.History = append(c.History, *ct)
						}
						return ok
					}
					_, ok := s.value()
					return ok
				})
			}
			if v[1].kind == jArray {
				s.i = v[1].start
				s.array(func() bool {
					e, ok := s.value()
					if e.kind == jString {
						c.CompletedToolCallIDs = append(c.CompletedToolCallIDs, spanString(b, e))
					}
					return ok
				})
			}
		})
		r.Compression = c
	case SubtypeSlashCommand:
		sc := &SlashCommand{}
		p.sub(b, sp, func(s *scanner) {
			var v [5]span
			fields(s, []string{"phase", "rawCommand", "sentToModel", "hiddenInvocation", "outputHistoryItems"}, v[:])
			sc.Phase, sc.RawCommand = str(v[0]), str(v[1])
			sc.SentToModel = v[2].kind == jTrue
			sc.HiddenInvocation = v[3].kind == jTrue
			if v[4].kind == jArray {
				sc.HasOutputItems = true
				sc.OutputItemTypes = []string{}
				s.i = v[4].start
				s.array(func() bool {
					t := ""
					if s.peek() == '{' {
						var tv [1]span
						fields(s, []string{"type"}, tv[:])
						sc.OutputItemTypes = append(sc.OutputItemTypes, str(tv[0]))
						return s.err == nil
					}
					_, ok := s.value()
					sc.OutputItemTypes = append(sc.OutputItemTypes, t)
					return ok
				})
				sc.OutputItemsLength = len(sc.OutputItemTypes)
			}
		})
		r.SlashCommand = sc
	case SubtypeGoalTurnEnd:
		p.sub(b, sp, func(s *scanner) {
			var v [1]span
			fields(s, []string{"toolCallId"}, v[:])
			r.GoalTurnEnd = &GoalTurnEnd{ToolCallID: str(v[0])}
		})
	case SubtypeTurnResult:
		t := &TurnResult{}
		p.sub(b, sp, func(s *scanner) {
			var v [5]span
			fields(s, []string{"promptId", "state", "stopReason", "cancelledAt", "endedAt"}, v[:])
			t.PromptID, t.State, t.StopReason = str(v[0]), str(v[1]), str(v[2])
			if truthySpan(b, v[3]) {
				t.HasCancelledAt = true
				t.CancelledAt = string(b[v[3].start:v[3].end])
			}
			if v[4].kind != jAbsent {
				t.EndedAt = string(b[v[4].start:v[4].end])
			}
		})
		r.TurnResult = t
	case SubtypeCustomTitle:
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"customTitle", "titleSource"}, v[:])
			r.CustomTitle = &CustomTitle{Title: str(v[0]), Source: str(v[1])}
		})
	case SubtypeNotification, SubtypeCron:
		n := &Notification{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"displayText", "backgroundTask"}, v[:])
			n.DisplayText = str(v[0])
			if v[1].kind == jObject {
				s.i = v[1].start
				var t [3]span
				fields(s, []string{"taskId", "status", "kind"}, t[:])
				n.TaskID, n.TaskStatus, n.TaskKind = str(t[0]), str(t[1]), str(t[2])
			}
		})
		r.Notification = n
	}
}
