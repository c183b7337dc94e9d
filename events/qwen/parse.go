package qwen

import (
	"sync"
)

// parsed is one JSON object found on a line, decoded as a chat record, with
// what Qwen's validator looks at kept apart from the Record.
type parsed struct {
	rec   *Record // nil when the parser is light
	start int     // byte offset of the object within the line
	end   int
	// JSON kinds of the fields validateTranscriptRecord checks.
	uuid, parent, session, typ, timestamp, subtype, message, parts jkind
	// id holds the same identity fields as rec, as decoded bytes that alias
	// the line or the parser's scratch: valid only until the parser reads
	// the next line. Pass 1 of LoadChain reads these and never builds a
	// Record.
	id ident
}

// ident is a record's identity, decoded but not copied. A field is nil when
// its JSON value is not a string (the Record field is "" then too).
type ident struct {
	uuid, parent, session, typ, subtype, cwd, ts []byte
	timeMs                                       int64
	timeOK                                       bool
}

// recordParser holds the scanner, options and scratch of one decoder. It is
// not safe for concurrent use.
type recordParser struct {
	s    scanner
	opts DecodeOptions
	// light skips message parts and payloads and builds no Record: pass 1
	// of LoadChain only needs identity, type, subtype and timestamp.
	light bool
	// With selective set, only the objects whose index (lineOrd for the
	// line's first) has its bit in wantBits, or (wantBits nil) is in wanted,
	// get a Record; the others are read light. Walk sets them so that
	// records off the chain cost no more than in pass 1.
	selective bool
	wantBits  []uint64
	wanted    []want
	lineOrd   uint32

	// esc holds the decoded text of strings that cannot alias the line
	// (escapes, invalid UTF-8). It is only appended to while a line is
	// decoded, so slices of it stay valid until the next line.
	esc []byte
	// parts collects the current message's parts before the record that
	// holds them is allocated.
	parts []partSpans
	// pend lists the string fields of the record being built and their
	// bytes; flush copies them all into one allocation. One string per
	// record instead of one per field is most of the cost of small records.
	pend []pending
	// eager makes setStr assign at once: for strings stored where a later
	// append may move them (compressed history, slash-command items).
	eager bool
	// Interned values that repeat on every record of a session. Each is its
	// own allocation, so sharing it pins no record's other strings.
	session, cwd string
	// seen holds, for each repeated record key, the last plain value it
	// had (its bytes are its value): see repeated.
	seen [numRecordKeys]string

	res lineResult // reused by Codec.DecodeLine
	// fused: res already holds the current line's result, parsed by the
	// framer where the line lies (fuse.go).
	fused bool
}

// partSpans is a decoded part whose strings are not materialized yet.
type partSpans struct {
	pt             Part
	text, id, name span
}

type pending struct {
	dst *string
	src []byte
}

// parserPool serves Codec.DecodeLine, which is called once per line, and
// LoadChain, Scan and Walk, called once or twice per decision: a parser's scratch
// and scanner stack outlive the call instead of being allocated per call.
var parserPool = sync.Pool{New: func() any { return new(recordParser) }}

// maxPooledScratch bounds the scratch a pooled parser keeps: one huge
// escaped string must not stay pinned by the pool.
const maxPooledScratch = 64 << 10

func getParser(opts DecodeOptions, light bool) *recordParser {
	p := parserPool.Get().(*recordParser)
	p.opts, p.light = opts, light
	return p
}

// putParser drops every reference the parser holds into records and lines
// (so pooling it keeps none of them alive) and returns it to the pool.
func putParser(p *recordParser) {
	p.selective, p.wanted, p.wantBits = false, nil, nil
	clear(p.res.recs)
	p.res.recs = p.res.recs[:0]
	clear(p.parts)
	p.parts = p.parts[:0]
	clear(p.pend)
	p.pend = p.pend[:0]
	p.s.b = nil
	if cap(p.esc) > maxPooledScratch {
		p.esc = nil
	}
	if cap(p.s.tmp) > maxPooledScratch {
		p.s.tmp = nil
	}
	if cap(p.s.stack)*8 > maxPooledScratch {
		p.s.stack = nil
	}
	if cap(p.res.recs) > 64 {
		p.res.recs = nil
	}
	if cap(p.parts) > 64 {
		p.parts = nil
	}
	if cap(p.pend) > 256 {
		p.pend = nil
	}
	parserPool.Put(p)
}

// parseObject decodes the object starting at b[start] (no leading
// whitespace) into *pr; the object must end exactly at len(b) when whole is
// set. It returns false, leaving *pr unspecified and the syntax error in
// p.s.err, when the object does not parse.
func (p *recordParser) parseObject(b []byte, whole bool, pr *parsed) bool {
	p.s.reset(b)
	s := &p.s
	var (
		f        [numRecordKeys]span // by record key; f[0] takes the others
		msgKind  jkind
		partKind jkind
		role     span
	)
	p.parts = p.parts[:0]
	var same uint32 // the repeated fields whose value is the last one seen
	// The members are read here rather than by objectIn and a closure (the
	// same loop and errors): a record has a dozen members, and the closure's
	// indirect call and captured variables cost more than the member's key.
	ok := true
	if s.peek() != '{' {
		ok = s.fail("expected object")
	} else if s.i++; s.peek() == '}' {
		s.i++
	} else {
	members:
		for {
			k, kok := s.keyIn(recordKeys)
			if !kok {
				ok = false
				break
			}
			if k == kMessage {
				// Decoded in place: the message holds the bulk of the
				// bytes and must be scanned once. A later duplicate key
				// wins, as in JSON.parse.
				role, msgKind, partKind = span{}, jAbsent, jAbsent
				p.parts = p.parts[:0]
				if s.peek() != '{' {
					sp, vok := s.value()
					msgKind = sp.kind
					ok = vok
				} else {
					msgKind = jObject
					role, partKind, ok = p.content(p.light)
				}
				if !ok {
					break
				}
			} else {
				var sp span
				vok := false
				if repeated>>k&1 != 0 {
					if sp, vok = s.sameString(p.seen[k]); vok {
						same |= 1 << k
					} else {
						same &^= 1 << k // a later duplicate key wins
					}
				}
				if !vok && s.i < len(s.b) && s.b[s.i] == '"' {
					// value's string case, without its call.
					sp.kind, sp.start = jString, s.i
					sp.escaped, sp.plain, vok = s.stringEnd()
					sp.end = s.i
					if !vok {
						ok = false
						break
					}
				} else if !vok {
					if sp, vok = s.value(); !vok {
						ok = false
						break
					}
				}
				f[k] = sp
			}
			switch s.peek() {
			case ',':
				s.i++
			case '}':
				s.i++
				break members
			default:
				if s.i >= len(s.b) {
					ok = s.fail("unexpected end of input")
				} else {
					ok = s.fail("expected , or }")
				}
				break members
			}
		}
	}
	if !ok {
		return s.fail("invalid record")
	}
	if whole {
		s.ws()
		if s.i != len(b) {
			return s.fail("unexpected data after the record")
		}
	}
	*pr = parsed{end: s.i,
		uuid: f[kUUID].kind, parent: f[kParentUUID].kind, session: f[kSessionID].kind, typ: f[kType].kind,
		timestamp: f[kTimestamp].kind, subtype: f[kSubtype].kind, message: msgKind, parts: partKind,
		id: ident{
			uuid: p.bytesOf(b, f[kUUID]), parent: p.bytesOf(b, f[kParentUUID]), session: p.bytesOf(b, f[kSessionID]),
			typ: p.bytesOf(b, f[kType]), subtype: p.bytesOf(b, f[kSubtype]), cwd: p.bytesOf(b, f[kCwd]),
			ts: p.bytesOf(b, f[kTimestamp]),
		}}
	if same&repeated != repeated {
		for _, k := range [...]int{kSessionID, kCwd, kVersion} {
			// A new value of a repeated field, plain, is the one to compare
			// with from the next record on.
			if same>>k&1 == 0 && f[k].kind == jString && f[k].plain {
				p.seen[k] = string(b[f[k].start+1 : f[k].end-1])
				same |= 1 << k // p.seen[k] is this record's value now
			}
		}
	}
	id := &pr.id
	if f[kTimestamp].kind == jString {
		id.timeMs, id.timeOK = parseTimeBytes(id.ts)
	}
	if p.light {
		return true
	}

	n := -1
	if partKind == jArray {
		n = len(p.parts)
	}
	rec, parts := newRecord(msgKind == jObject, n)
	pr.rec = rec
	p.setStr(&rec.UUID, id.uuid)
	p.setStr(&rec.ParentUUID, id.parent)
	rec.ParentNull = f[kParentUUID].kind == jNull
	rec.SessionID = p.repeatedStr(kSessionID, same, &p.session, id.session)
	p.setShort(&rec.Type, id.typ)
	p.setStr(&rec.Subtype, id.subtype)
	rec.HasSubtype = f[kSubtype].kind == jString
	rec.Cwd = p.repeatedStr(kCwd, same, &p.cwd, id.cwd)
	p.setStr(&rec.Timestamp, id.ts)
	rec.TimeMs, rec.TimeOK = id.timeMs, id.timeOK
	if rec.Message != nil {
		p.setShort(&rec.Message.Role, p.bytesOf(b, role))
		p.setParts(b, parts)
	}
	p.setShort(&rec.Provenance, p.bytesOf(b, f[kProvenance]))
	p.setStr(&rec.PromptID, p.bytesOf(b, f[kPromptID]))
	if d := p.bytesOf(b, f[kDaemonPromptID]); len(jsTrim(d)) > 0 {
		p.setStr(&rec.DaemonPromptID, d)
	}
	rec.DeliveredTurn = f[kDeliveredTurn].kind == jTrue
	if same>>kVersion&1 != 0 {
		rec.Version = p.seen[kVersion]
	} else {
		p.setShort(&rec.Version, p.bytesOf(b, f[kVersion]))
	}
	rec.HasUsage = f[kUsageMetadata].kind == jObject
	if f[kBackgroundTurn].kind == jObject {
		rec.HasBackground = true
		rec.BackgroundTurn = p.backgroundTurn(b, f[kBackgroundTurn])
	}
	if f[kGoalContext].kind == jObject {
		rec.GoalContext = p.goalContext(b, f[kGoalContext])
	}
	if f[kToolCallResult].kind == jObject {
		p.sub(b, f[kToolCallResult], func(s *scanner) {
			var v [2]span
			fields(s, []string{"status", "executionStatus"}, v[:])
			p.setShort(&rec.ToolStatus, p.bytesOf(b, v[0]))
			p.setShort(&rec.ToolExecStatus, p.bytesOf(b, v[1]))
		})
	}
	if f[kSystemPayload].kind == jObject && rec.HasSubtype {
		p.payload(rec, id.subtype, b, f[kSystemPayload])
	}
	p.flush()
	return true
}

// setParts fills parts from the collected part spans.
func (p *recordParser) setParts(b []byte, parts []Part) {
	for i := range parts {
		ps := &p.parts[i]
		parts[i] = ps.pt
		pt := &parts[i]
		p.setStr(&pt.Text, p.bytesOf(b, ps.text))
		p.setStr(&pt.ID, p.bytesOf(b, ps.id))
		p.setStr(&pt.Name, p.bytesOf(b, ps.name))
	}
	clear(p.parts) // Raw slices belong to the record now
	p.parts = p.parts[:0]
}

// content scans a Gemini Content object at s.i, collecting its parts into
// p.parts, and returns the span of its role and the kind of its parts. With
// light set the parts are validated but not decoded.
func (p *recordParser) content(light bool) (role span, partsKind jkind, ok bool) {
	s := &p.s
	ok = s.objectIn(contentKeys, func(k int) bool {
		switch k {
		case kRole:
			sp, ok := s.value()
			role = sp
			return ok
		case kParts:
			p.parts = p.parts[:0]
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
			return s.array(p.part)
		}
		_, ok := s.value()
		return ok
	})
	return role, partsKind, ok
}

// part decodes one element of a parts array into p.parts.
func (p *recordParser) part() bool {
	s := &p.s
	p.parts = append(p.parts, partSpans{})
	ps := &p.parts[len(p.parts)-1]
	pt := &ps.pt
	if s.peek() != '{' {
		sp, ok := s.value()
		if ok && p.opts.KeepPayloads {
			pt.Raw = append([]byte(nil), s.b[sp.start:sp.end]...)
		}
		return ok
	}
	start := s.i
	var (
		fc, fr, inline, file, thought span
		fcID, fcName, frID, frName    span
		sawText, sawOther             bool
	)
	ok := s.objectIn(partKeys, func(k int) bool {
		var dst *span
		if k != kText {
			sawOther = true
		}
		switch k {
		case kText:
			sawText = true
			dst = &ps.text
		case kThought:
			dst = &thought
		case kFunctionCall, kFunctionResponse:
			isCall := k == kFunctionCall
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
			*sp = span{kind: jObject, start: s.i}
			ok := s.objectIn(callKeys, func(k int) bool {
				switch k {
				case kID:
					v, ok := s.value()
					*id = v
					return ok
				case kName:
					v, ok := s.value()
					*name = v
					return ok
				}
				_, ok := s.value()
				return ok
			})
			sp.end = s.i
			return ok
		case kInlineData:
			dst = &inline
		case kFileData:
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
		return false
	}
	pt.HasText = ps.text.kind == jString
	if !pt.HasText {
		ps.text = span{}
	}
	pt.OnlyText = sawText && !sawOther
	pt.Thought = truthySpan(s.b, thought)
	idName := func(id, name span) {
		ps.id, ps.name = id, name
		pt.HasID = id.kind == jString
		pt.HasName = name.kind == jString
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
	return true
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
