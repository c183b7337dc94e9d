package dsh

import (
	"bytes"
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
