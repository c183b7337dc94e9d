package dsh

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// The fast path. Loading a log decodes every line's envelope and, for the
// turn fold, most payloads; encoding/json spent most of that time in
// reflection. scanner decodes the same structs by hand, but only for input it
// can decode exactly as encoding/json would: whenever encoding/json could
// answer differently — an error of any kind, a null where the struct has no
// raw member, a repeated or case-folded key, an escaped or non-ASCII key,
// nesting past maxFastDepth — it gives up (bad) and the caller reruns the
// encoding/json path, which then also produces the exact error text. So the
// fast path only ever replaces a success with the same success.

// maxFastDepth bounds the nesting the scanner follows. encoding/json allows
// 10000; deeper input is rare enough to leave to it.
const maxFastDepth = 256

type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) fail() {
	s.bad = true
	s.i = len(s.b) // every later read sees the end and fails too
}

func (s *scanner) ws() {
	s.i = jsonscan.SkipSpace(s.b, s.i)
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end accepts only trailing whitespace, as json.Unmarshal does.
func (s *scanner) end() {
	if s.peek() != 0 || s.i != len(s.b) {
		s.fail()
	}
}

// rawString scans a string token at s.i (which holds '"'), validating it as
// encoding/json's scanner does, and returns its content between the quotes.
// escaped reports a backslash, high a byte >= 0x80.
func (s *scanner) rawString() (content []byte, escaped, high bool) {
	end, escaped, high, err := jsonscan.String(s.b, s.i)
	if err != nil {
		s.fail()
		return nil, false, false
	}
	content = s.b[s.i+1 : end-1]
	s.i = end
	return content, escaped, high
}

// str decodes a string value the way encoding/json's unquote does: escapes
// resolved, a lone or broken surrogate escape and every byte of invalid
// UTF-8 replaced by U+FFFD.
func (s *scanner) str() string {
	if s.peek() != '"' {
		s.fail()
		return ""
	}
	content, escaped, high := s.rawString()
	if s.bad {
		return ""
	}
	if !escaped && (!high || utf8.Valid(content)) {
		return intern(content)
	}
	return unescape(content)
}

// unescape is encoding/json's unquoteBytes over already validated content.
func unescape(c []byte) string {
	return string(jsonscan.AppendUnquote(make([]byte, 0, len(c)+utf8.UTFMax), c))
}

// intern returns the vocabulary's strings without allocating; any other
// content is copied.
func intern(b []byte) string {
	switch string(b) {
	case TypeTurnStart:
		return TypeTurnStart
	case TypeTurnEnd:
		return TypeTurnEnd
	case TypeStepStart:
		return TypeStepStart
	case TypeStepEnd:
		return TypeStepEnd
	case TypeUserMessage:
		return TypeUserMessage
	case TypeContextMessage:
		return TypeContextMessage
	case TypeAssistantChunk:
		return TypeAssistantChunk
	case TypeAssistantMessage:
		return TypeAssistantMessage
	case TypeToolCall:
		return TypeToolCall
	case TypeToolResult:
		return TypeToolResult
	case TypeSteeringMessage:
		return TypeSteeringMessage
	case TypeUsage:
		return TypeUsage
	case TypeError:
		return TypeError
	case "user":
		return "user"
	case "plugin":
		return "plugin"
	case "agent":
		return "agent"
	case "message":
		return "message"
	case "continuation":
		return "continuation"
	case "injection":
		return "injection"
	case "completed":
		return "completed"
	case "aborted":
		return "aborted"
	case "disposed":
		return "disposed"
	case "max-tokens":
		return "max-tokens"
	case "interrupted":
		return "interrupted"
	case "text":
		return "text"
	case "reasoning":
		return "reasoning"
	case "tool-call":
		return "tool-call"
	case "tool-result":
		return "tool-result"
	case "image":
		return "image"
	case "block-start":
		return "block-start"
	case "text-delta":
		return "text-delta"
	case "reasoning-delta":
		return "reasoning-delta"
	case "tool-call-delta":
		return "tool-call-delta"
	case "block-end":
		return "block-end"
	case "finish":
		return "finish"
	case "stop":
		return "stop"
	case "tool-calls":
		return "tool-calls"
	}
	return string(b)
}

// number scans a number token and reports whether it is a plain integer
// (no fraction, no exponent).
func (s *scanner) number() (lit []byte, integer bool) {
	end, integer, err := jsonscan.Number(s.b, s.i)
	if err != nil {
		s.fail()
		return nil, false
	}
	lit = s.b[s.i:end]
	s.i = end
	return lit, integer
}

// parseInt is strconv.ParseInt(lit, 10, 64) for a validated plain integer.
func parseInt(lit []byte) (int64, bool) {
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	if len(lit) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range lit {
		u = u*10 + uint64(c-'0') // 19 digits cannot overflow uint64
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// literal consumes the word w (true, false, null) at s.i.
func (s *scanner) literal(w string) {
	end, err := jsonscan.Literal(s.b, s.i, w)
	if err != nil {
		s.fail()
		return
	}
	s.i = end
}

// skip validates and consumes one value that depth containers enclose. The
// keys inside it are matched against no field, so unlike member it takes
// escaped and non-ASCII keys: encoding/json only validates them.
func (s *scanner) skip(depth int) {
	s.ws()
	end, err := jsonscan.SkipValue(s.b, s.i, depth, maxFastDepth)
	if err != nil {
		s.fail()
		return
	}
	s.i = end
}

// raw consumes one value and returns a copy of its bytes, as
// json.RawMessage keeps them (no surrounding whitespace).
func (s *scanner) raw(depth int) []byte {
	s.ws()
	start := s.i
	s.skip(depth)
	if s.bad {
		return nil
	}
	return bytes.Clone(s.b[start:s.i])
}

// member reads the next member of an open object up to and including the
// colon, and returns its key; nil at the closing brace (consumed) or on
// failure. A key with an escape or a non-ASCII byte fails: encoding/json
// matches keys after unescaping and Unicode case folding, which the fast
// path does not reproduce.
func (s *scanner) member(first *bool) []byte {
	c := s.peek()
	if c == '}' && *first {
		s.i++
		return nil
	}
	if !*first {
		switch c {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			c = s.peek()
		default:
			s.fail()
			return nil
		}
	}
	*first = false
	if c != '"' {
		s.fail()
		return nil
	}
	key, escaped, high := s.rawString()
	if s.bad || escaped || high {
		s.fail()
		return nil
	}
	if s.peek() != ':' {
		s.fail()
		return nil
	}
	s.i++
	return key // non-nil: a subslice of s.b
}

// element moves to the next element of an open array; false at the closing
// bracket (consumed) or on failure.
func (s *scanner) element(first *bool) bool {
	c := s.peek()
	if *first {
		*first = false
		if c == ']' {
			s.i++
			return false
		}
		if c == 0 {
			s.fail()
		}
		return !s.bad
	}
	switch c {
	case ']':
		s.i++
		return false
	case ',':
		s.i++
		return true
	}
	s.fail()
	return false
}

// open starts an object value: true when one follows; false for null, which
// encoding/json leaves as the zero value; any other value fails.
func (s *scanner) open() bool {
	switch s.peek() {
	case '{':
		s.i++
		return true
	case 'n':
		s.literal("null")
		return false
	}
	s.fail()
	return false
}

// null consumes a null if one follows.
func (s *scanner) null() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

// seen fails on a repeated member: encoding/json merges a repeated object
// into the first and reuses a repeated array's elements, which the fast path
// does not reproduce.
func (s *scanner) seen(set *uint32, bit uint32) {
	if *set&bit != 0 {
		s.fail()
	}
	*set |= bit
}

// unknown skips the value of a member that names no field, failing when the
// key matches one case-insensitively (encoding/json would decode it).
func (s *scanner) unknown(key []byte, depth int, fields ...string) {
	for _, f := range fields {
		if asciiEqualFold(key, f) {
			s.fail()
			return
		}
	}
	s.skip(depth)
}

// asciiEqualFold is bytes.EqualFold for an ASCII key and field name.
func asciiEqualFold(key []byte, f string) bool {
	if len(key) != len(f) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], f[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

func (s *scanner) strField(dst *string, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		*dst = s.str()
	}
}

func (s *scanner) optStrField(dst **string, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		v := s.str()
		*dst = &v
	}
}

func (s *scanner) int64Value() int64 {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		s.fail()
		return 0
	}
	lit, integer := s.number()
	if s.bad || !integer {
		s.fail()
		return 0
	}
	n, ok := parseInt(lit)
	if !ok {
		s.fail()
	}
	return n
}

func (s *scanner) intField(dst *int64, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		*dst = s.int64Value()
	}
}

func (s *scanner) optIntField(dst **int64, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		v := s.int64Value()
		*dst = &v
	}
}

func (s *scanner) boolValue() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return true
	case 'f':
		s.literal("false")
		return false
	}
	s.fail()
	return false
}

func (s *scanner) boolField(dst *bool, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		*dst = s.boolValue()
	}
}

func (s *scanner) optBoolField(dst **bool, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		v := s.boolValue()
		*dst = &v
	}
}

// rawField is a json.RawMessage member: null is kept as the bytes "null".
func (s *scanner) rawField(dst *[]byte, set *uint32, bit uint32, depth int) {
	s.seen(set, bit)
	*dst = s.raw(depth)
}

// fastParseRecord is ParseRecord for input the scanner decodes exactly,
// except that the record's data is a subslice of line; ok is false when the
// encoding/json path must decide.
func fastParseRecord(line []byte) (Record, bool) {
	s := scanner{b: line}
	if s.peek() != '{' {
		return Record{}, false
	}
	s.i++
	var (
		r             Record
		set           uint32
		seq, tm       []byte
		seqInt, tmInt bool
	)
	for first := true; ; {
		k := s.member(&first)
		if k == nil {
			break
		}
		switch string(k) {
		case "type":
			s.seen(&set, 1)
			if s.null() {
				s.fail() // no type
			}
			r.Type = s.str()
		case "seq":
			s.seen(&set, 2)
			if c := s.peek(); c != '-' && (c < '0' || c > '9') {
				s.fail() // null, or a string json.Number accepts
			}
			seq, seqInt = s.number()
		case "time":
			s.seen(&set, 4)
			if c := s.peek(); c != '-' && (c < '0' || c > '9') {
				s.fail()
			}
			tm, tmInt = s.number()
		case "data":
			s.seen(&set, 8)
			s.ws()
			start := s.i
			s.skip(1)
			if !s.bad {
				r.Data = s.b[start:s.i]
			}
		default:
			s.unknown(k, 1, "type", "seq", "time", "data")
		}
	}
	s.end()
	if s.bad || set != 15 || r.Type == "" {
		return Record{}, false
	}
	var ok bool
	if r.Seq, ok = wholeLiteral(seq, seqInt); !ok || r.Seq < 0 {
		return Record{}, false
	}
	if r.Time, ok = wholeLiteral(tm, tmInt); !ok {
		return Record{}, false
	}
	return r, true
}

// wholeLiteral is wholeNumber over a validated number literal.
func wholeLiteral(lit []byte, integer bool) (int64, bool) {
	if integer {
		if n, ok := parseInt(lit); ok {
			return n, true
		}
	}
	return wholeNumber(json.Number(lit))
}

// appendCompact is json.Compact for input the scanner validates (one value,
// optional surrounding whitespace): data appended to dst with the whitespace
// outside strings dropped. ok is false, and dst unchanged, when encoding/json
// must decide.
func appendCompact(dst, data []byte) ([]byte, bool) {
	s := scanner{b: data}
	s.skip(0)
	s.end()
	if s.bad {
		return dst, false
	}
	start, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString:
			if c == '\\' {
				i++ // the escaped byte (perhaps a quote) never ends the string
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, data[start:i]...)
			start = i + 1
		}
	}
	return append(dst, data[start:]...), true
}

// numberLit scans a number value for a json.Number member; a string, which
// json.Number would also take, or null fails.
func (s *scanner) numberLit() []byte {
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		s.fail()
		return nil
	}
	lit, _ := s.number()
	return lit
}

// fastParseHeader is ParseHeader for input the scanner decodes exactly; ok
// is false when the encoding/json path must decide.
func fastParseHeader(line []byte) (Header, bool) {
	s := scanner{b: line}
	if s.peek() != '{' {
		return Header{}, false
	}
	s.i++
	var (
		h                Header
		set              uint32
		typ              string
		version, created []byte
	)
	for first := true; ; {
		k := s.member(&first)
		if k == nil {
			break
		}
		switch string(k) {
		case "type":
			s.seen(&set, 1)
			typ = s.str() // null fails: the guard wants the string "session"
		case "version":
			s.seen(&set, 2)
			version = s.numberLit()
		case "id":
			s.seen(&set, 4)
			h.ID = s.str()
		case "createdAt":
			s.seen(&set, 8)
			created = s.numberLit()
		case "cwd":
			s.optStrField(&h.Cwd, &set, 16)
		case "parentSession":
			s.optStrField(&h.ParentSession, &set, 32)
		default:
			s.unknown(k, 1, "type", "version", "id", "createdAt", "cwd", "parentSession")
		}
	}
	s.end()
	if s.bad || set&15 != 15 || typ != HeaderType {
		return Header{}, false
	}
	var err1, err2 error
	h.Version, err1 = json.Number(version).Float64()
	h.CreatedAt, err2 = json.Number(created).Float64()
	if err1 != nil || err2 != nil {
		return Header{}, false
	}
	return h, true
}

// fastParseSummary is ParseSummary for input the scanner decodes exactly;
// ok is false when the encoding/json path must decide.
func fastParseSummary(b []byte) (SummaryPatch, bool) {
	s := scanner{b: b}
	if s.peek() != '{' {
		return SummaryPatch{}, false
	}
	s.i++
	var (
		p   SummaryPatch
		set uint32
	)
	for first := true; ; {
		k := s.member(&first)
		if k == nil {
			break
		}
		switch string(k) {
		case "updatedAt":
			s.seen(&set, 1)
			if !s.null() {
				f, err := json.Number(s.numberLit()).Float64()
				if err != nil {
					s.fail()
				}
				p.UpdatedAt = &f
			}
		case "title":
			s.optStrField(&p.Title, &set, 2)
		case "firstPrompt":
			s.optStrField(&p.FirstPrompt, &set, 4)
		default:
			s.unknown(k, 1, "updatedAt", "title", "firstPrompt")
		}
	}
	s.end()
	if s.bad {
		return SummaryPatch{}, false
	}
	return p, true
}
