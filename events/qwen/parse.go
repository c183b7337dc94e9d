package qwen

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
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

	res lineResult // reused by Codec.DecodeLine
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

// needs says whether the k-th object of the line gets a Record.
func (p *recordParser) needs(k int) bool {
	if p.light || !p.selective {
		return !p.light
	}
	o := p.lineOrd + uint32(k)
	if p.wantBits != nil {
		return bitSet(p.wantBits, o)
	}
	for _, w := range p.wanted {
		if w.ord >= o {
			return w.ord == o
		}
	}
	return false
}

// bytesOf decodes a string span: the input bytes themselves when the string
// has no escapes and is valid UTF-8, else its decoding (invalid UTF-8 and
// lone surrogates become U+FFFD, as encoding/json does) appended to p.esc.
// Any other kind yields nil.
func (p *recordParser) bytesOf(b []byte, sp span) []byte {
	if sp.kind != jString {
		return nil
	}
	raw := b[sp.start+1 : sp.end-1]
	if sp.plain || !sp.escaped && utf8.Valid(raw) {
		return raw
	}
	n := len(p.esc)
	p.esc = unquoteAppend(p.esc, raw)
	return p.esc[n:len(p.esc):len(p.esc)]
}

// setStr arranges for *dst to hold src once the record is flushed.
func (p *recordParser) setStr(dst *string, src []byte) {
	switch {
	case len(src) == 0:
		*dst = ""
	case p.eager:
		*dst = string(src)
	default:
		p.pend = append(p.pend, pending{dst, src})
	}
}

// flush materializes every pending string of the record in one allocation.
// The strings are exactly the fields' bytes: nothing else of the line (tool
// output, arguments) is kept alive by a record.
func (p *recordParser) flush() {
	n := 0
	for _, q := range p.pend {
		n += len(q.src)
	}
	if n > 0 {
		var sb strings.Builder
		sb.Grow(n)
		for _, q := range p.pend {
			sb.Write(q.src)
		}
		all := sb.String()
		off := 0
		for _, q := range p.pend {
			*q.dst = all[off : off+len(q.src)]
			off += len(q.src)
		}
	}
	clear(p.pend)
	p.pend = p.pend[:0]
}

// intern returns *cache when it equals b, else a new string that becomes
// the cache.
func intern(cache *string, b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if string(b) != *cache {
		*cache = string(b)
	}
	return *cache
}

// constant returns the literal a common short value equals, so that it
// costs no bytes in the record's string; "" when it is none of them.
func constant(b []byte) string {
	switch string(b) {
	case TypeUser:
		return TypeUser
	case TypeAssistant:
		return TypeAssistant
	case TypeToolResult:
		return TypeToolResult
	case TypeSystem:
		return TypeSystem
	case "model":
		return "model"
	case "real_user":
		return "real_user"
	case "assistant_output":
		return "assistant_output"
	case Version0244:
		return Version0244
	}
	return ""
}

// setShort is setStr for fields whose values are usually constants.
func (p *recordParser) setShort(dst *string, src []byte) {
	if c := constant(src); c != "" {
		*dst = c
		return
	}
	p.setStr(dst, src)
}

// Allocation shapes of a record: the record, its message and up to two
// parts in one object, since they live and die together.
type recordMsg struct {
	rec Record
	msg Content
}

type recordMsg1 struct {
	rec  Record
	msg  Content
	part [1]Part
}

type recordMsg2 struct {
	rec  Record
	msg  Content
	part [2]Part
}

// newRecord allocates a record, with a message when hasMsg, holding n parts
// (n < 0: parts is not an array, and Parts stays nil).
func newRecord(hasMsg bool, n int) (*Record, []Part) {
	if !hasMsg {
		return new(Record), nil
	}
	var (
		r     *Record
		parts []Part
	)
	switch {
	case n == 1:
		blk := new(recordMsg1)
		r, parts = &blk.rec, blk.part[:]
		r.Message = &blk.msg
	case n == 2:
		blk := new(recordMsg2)
		r, parts = &blk.rec, blk.part[:]
		r.Message = &blk.msg
	default:
		blk := new(recordMsg)
		r = &blk.rec
		r.Message = &blk.msg
		if n >= 0 {
			parts = make([]Part, n)
		}
	}
	r.Message.Parts = parts
	return r, parts
}

// parseObject decodes the object starting at b[start] (no leading
// whitespace) into *pr; the object must end exactly at len(b) when whole is
// set. It returns false, leaving *pr unspecified and the syntax error in
// p.s.err, when the object does not parse.
func (p *recordParser) parseObject(b []byte, whole bool, pr *parsed) bool {
	p.s.reset(b)
	s := &p.s
	var (
		f struct {
			uuid, parent, session, typ, timestamp, subtype, provenance span
			promptID, daemonPromptID, cwd, delivered, background       span
			payload, goal, role                                        span
			version, usage                                             span
		}
		msgKind  jkind
		partKind jkind
	)
	p.parts = p.parts[:0]
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
		case "version":
			dst = &f.version
		case "usageMetadata":
			dst = &f.usage
		case "message":
			// Decoded in place: the message holds the bulk of the bytes
			// and must be scanned once. A later duplicate key wins, as in
			// JSON.parse.
			f.role, msgKind, partKind = span{}, jAbsent, jAbsent
			p.parts = p.parts[:0]
			if s.peek() != '{' {
				sp, ok := s.value()
				msgKind = sp.kind
				return ok
			}
			msgKind = jObject
			var ok bool
			f.role, partKind, ok = p.content(p.light)
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
		return s.fail("invalid record")
	}
	if whole {
		s.ws()
		if s.i != len(b) {
			return s.fail("unexpected data after the record")
		}
	}
	*pr = parsed{end: s.i,
		uuid: f.uuid.kind, parent: f.parent.kind, session: f.session.kind, typ: f.typ.kind,
		timestamp: f.timestamp.kind, subtype: f.subtype.kind, message: msgKind, parts: partKind,
		id: ident{
			uuid: p.bytesOf(b, f.uuid), parent: p.bytesOf(b, f.parent), session: p.bytesOf(b, f.session),
			typ: p.bytesOf(b, f.typ), subtype: p.bytesOf(b, f.subtype), cwd: p.bytesOf(b, f.cwd),
			ts: p.bytesOf(b, f.timestamp),
		}}
	id := &pr.id
	if f.timestamp.kind == jString {
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
	rec.ParentNull = f.parent.kind == jNull
	rec.SessionID = intern(&p.session, id.session)
	p.setShort(&rec.Type, id.typ)
	p.setStr(&rec.Subtype, id.subtype)
	rec.HasSubtype = f.subtype.kind == jString
	rec.Cwd = intern(&p.cwd, id.cwd)
	p.setStr(&rec.Timestamp, id.ts)
	rec.TimeMs, rec.TimeOK = id.timeMs, id.timeOK
	if rec.Message != nil {
		p.setShort(&rec.Message.Role, p.bytesOf(b, f.role))
		p.setParts(b, parts)
	}
	p.setShort(&rec.Provenance, p.bytesOf(b, f.provenance))
	p.setStr(&rec.PromptID, p.bytesOf(b, f.promptID))
	if d := p.bytesOf(b, f.daemonPromptID); len(jsTrim(d)) > 0 {
		p.setStr(&rec.DaemonPromptID, d)
	}
	rec.DeliveredTurn = f.delivered.kind == jTrue
	p.setShort(&rec.Version, p.bytesOf(b, f.version))
	rec.HasUsage = f.usage.kind == jObject
	if f.background.kind == jObject {
		rec.HasBackground = true
		rec.BackgroundTurn = p.backgroundTurn(b, f.background)
	}
	if f.goal.kind == jObject {
		rec.GoalContext = p.goalContext(b, f.goal)
	}
	if f.payload.kind == jObject && rec.HasSubtype {
		p.payload(rec, id.subtype, b, f.payload)
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
	ok = s.object(func(k []byte) bool {
		switch string(k) {
		case "role":
			sp, ok := s.value()
			role = sp
			return ok
		case "parts":
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
	ok := s.object(func(k []byte) bool {
		var dst *span
		if string(k) != "text" {
			sawOther = true
		}
		switch string(k) {
		case "text":
			sawText = true
			dst = &ps.text
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

func (p *recordParser) backgroundTurn(b []byte, sp span) *BackgroundTurn {
	t := &BackgroundTurn{}
	p.sub(b, sp, func(s *scanner) {
		var v [7]span
		fields(s, []string{"turnId", "taskId", "kind", "toolUseId", "sourceTurnId", "label", "startedAt"}, v[:])
		for i, dst := range []*string{&t.TurnID, &t.TaskID, &t.Kind, &t.ToolUseID, &t.SourceTurnID, &t.Label} {
			p.setStr(dst, p.bytesOf(b, v[i]))
		}
		if v[6].kind != jAbsent {
			p.setStr(&t.StartedAt, b[v[6].start:v[6].end])
		}
	})
	return t
}

func (p *recordParser) goalContext(b []byte, sp span) *GoalContext {
	g := &GoalContext{}
	p.sub(b, sp, func(s *scanner) {
		var v [3]span
		fields(s, []string{"goalId", "revision", "turnId"}, v[:])
		p.setStr(&g.GoalID, p.bytesOf(b, v[0]))
		g.HasGoalID = v[0].kind == jString
		p.setStr(&g.TurnID, p.bytesOf(b, v[2]))
		g.HasTurnID = v[2].kind == jString
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

// payload decodes the typed systemPayload of r's subtype. Its strings are
// flushed with the record's, except where they land in slices still growing.
// subtype is the record's, whose string is not materialized yet.
func (p *recordParser) payload(r *Record, subtype []byte, b []byte, sp span) {
	str := func(dst *string, v span) { p.setStr(dst, p.bytesOf(b, v)) }
	switch string(subtype) {
	case SubtypeChatCompression:
		c := &Compression{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"compressedHistory", "completedToolCallIds"}, v[:])
			c.HasHistory = truthySpan(b, v[0])
			p.eager = true
			defer func() { p.eager = false }()
			if v[0].kind == jArray {
				s.i = v[0].start
				s.array(func() bool {
					if s.peek() == '{' {
						role, kind, ok := p.content(false)
						if ok {
							ct := Content{}
							p.setStr(&ct.Role, p.bytesOf(b, role))
							if kind == jArray {
								ct.Parts = make([]Part, len(p.parts))
								p.setParts(b, ct.Parts)
							}
							c.History = append(c.History, ct)
						}
						p.parts = p.parts[:0]
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
						c.CompletedToolCallIDs = append(c.CompletedToolCallIDs, string(p.bytesOf(b, e)))
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
			str(&sc.Phase, v[0])
			str(&sc.RawCommand, v[1])
			sc.SentToModel = v[2].kind == jTrue
			sc.HiddenInvocation = v[3].kind == jTrue
			if v[4].kind == jArray {
				sc.HasOutputItems = true
				sc.OutputItemTypes = []string{}
				s.i = v[4].start
				s.array(func() bool {
					if s.peek() == '{' {
						var tv [1]span
						fields(s, []string{"type"}, tv[:])
						sc.OutputItemTypes = append(sc.OutputItemTypes, string(p.bytesOf(b, tv[0])))
						return s.err == nil
					}
					_, ok := s.value()
					sc.OutputItemTypes = append(sc.OutputItemTypes, "")
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
			r.GoalTurnEnd = &GoalTurnEnd{}
			str(&r.GoalTurnEnd.ToolCallID, v[0])
		})
	case SubtypeTurnResult:
		t := &TurnResult{}
		p.sub(b, sp, func(s *scanner) {
			var v [7]span
			fields(s, []string{"promptId", "state", "stopReason", "cancelledAt", "endedAt", "startedAt", "error"}, v[:])
			str(&t.PromptID, v[0])
			str(&t.State, v[1])
			str(&t.StopReason, v[2])
			if truthySpan(b, v[3]) {
				t.HasCancelledAt = true
				p.setStr(&t.CancelledAt, b[v[3].start:v[3].end])
			}
			if v[4].kind != jAbsent {
				p.setStr(&t.EndedAt, b[v[4].start:v[4].end])
			}
			if v[5].kind != jAbsent {
				p.setStr(&t.StartedAt, b[v[5].start:v[5].end])
			}
			if v[6].kind == jObject {
				t.HasError = true
				s.i = v[6].start
				var e [2]span
				fields(s, []string{"message", "code"}, e[:])
				str(&t.ErrorMessage, e[0])
				str(&t.ErrorCode, e[1])
			}
		})
		r.TurnResult = t
	case SubtypeCustomTitle:
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"customTitle", "titleSource"}, v[:])
			r.CustomTitle = &CustomTitle{}
			str(&r.CustomTitle.Title, v[0])
			str(&r.CustomTitle.Source, v[1])
		})
	case SubtypeNotification, SubtypeCron, SubtypeBackgroundTaskCompleted:
		n := &Notification{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"displayText", "backgroundTask"}, v[:])
			str(&n.DisplayText, v[0])
			if v[1].kind == jObject {
				s.i = v[1].start
				var t [5]span
				fields(s, []string{"taskId", "status", "kind", "sourceTurnId", "toolUseId"}, t[:])
				str(&n.TaskID, t[0])
				str(&n.TaskStatus, t[1])
				str(&n.TaskKind, t[2])
				str(&n.SourceTurnID, t[3])
				str(&n.ToolUseID, t[4])
			}
		})
		r.Notification = n
	case SubtypeUITelemetry:
		r.Telemetry = p.telemetry(b, sp)
	case SubtypeFileHistorySnapshot:
		p.snapshotPromptID(&r.SnapshotPromptID, b, sp)
	case SubtypeBranchCheckpoint:
		c := &BranchCheckpoint{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"startExclusiveRecordUuid", "assistantRecordUuid"}, v[:])
			str(&c.StartExclusiveRecordUUID, v[0])
			str(&c.AssistantRecordUUID, v[1])
		})
		r.BranchCheckpoint = c
	}
}
