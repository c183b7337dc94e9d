package qwen

import (
	"encoding/binary"
	"math/bits"
	"strconv"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// This file is a small JSON scanner specialised for chat records. It exists
// because encoding/json decodes (or at least buffers and re-scans) every
// value, while a transcript is mostly tool output that no decision reads:
// the scanner validates a skipped value in one pass with word-at-a-time
// string scanning and never allocates for it. It accepts exactly the JSON
// grammar of RFC 8259 (what JSON.parse accepts), with no nesting limit.

// jkind is the JSON type of a value, as JavaScript's typeof distinguishes it
// (plus null, true and false apart).
type jkind uint8

const (
	jAbsent jkind = iota
	jNull
	jFalse
	jTrue
	jNumber
	jString
	jObject
	jArray
)

func (k jkind) String() string {
	return [...]string{"absent", "null", "false", "true", "number", "string", "object", "array"}[k]
}

// span is a value's kind and byte range [start, end) in the scanned input.
type span struct {
	kind       jkind
	start, end int
	escaped    bool // a string containing backslash escapes
	// plain: a string of ASCII without escapes, whose bytes are its value
	// (nothing to validate or decode). Only a string is plain: bytesOf
	// reads it without looking at kind.
	plain bool
}

// syntaxError is a JSON syntax error at a byte offset of the scanned input.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.off) + ": " + e.msg
}

type scanner struct {
	b     []byte
	i     int
	err   *syntaxError
	stack []uint64 // one bit per open container: 1 = object, 0 = array
	depth int
	tmp   []byte // scratch for escaped keys
	// oneLine makes '\n' and '\r' end whitespace (and so fail the parse):
	// the fused line read (fuse.go), which must not parse across a line.
	oneLine bool
}

func (s *scanner) reset(b []byte) {
	s.b, s.i, s.err, s.depth = b, 0, nil, 0
}

func (s *scanner) fail(msg string) bool {
	if s.err == nil {
		s.err = &syntaxError{msg: msg, off: s.i}
	}
	return false
}

// ws is the scanner's own loop rather than jsonscan.SkipSpace: the call
// (not inlined there) cost ~8% on small records.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t':
			s.i++
		case '\n', '\r':
			if s.oneLine {
				return
			}
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-whitespace byte, or 0 at the end. It is called
// several times per member, and records written by Qwen hold no
// whitespace: the first test settles nearly every call.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		if c := s.b[s.i]; c > ' ' {
			return c
		}
		s.ws()
		if s.i < len(s.b) {
			return s.b[s.i]
		}
	}
	return 0
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopMask flags (high bit of the byte) the bytes of w that end a run of
// plain string bytes: a quote, a backslash or a control byte. Only the
// lowest flag is exact (a borrow may flag bytes above it), which is all
// stringEnd uses. One test finds quotes and control bytes together:
// x^0x02 is below 0x21 exactly when x is below 0x20 or is '"' (0x22).
func stopMask(w uint64) uint64 {
	qc := w ^ (lsb * 0x02)
	bs := w ^ (lsb * '\\')
	return ((qc-lsb*0x21)&^qc | (bs-lsb)&^bs) & msb
}

// stringEndScalar is stringEnd word by word, stopping at every escape: the
// scanner that names a string's error.
func (s *scanner) stringEndScalar() (escaped, plain, ok bool) {
	b := s.b
	i := s.i + 1
	var hi uint64 // the OR of every byte of the string
	for {
		// Eight bytes at a time: stop at the first quote, backslash or
		// control byte.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i : i+8])
			m := stopMask(w)
			if m != 0 {
				// Only the bytes below the first flagged one are the
				// string's; (m & -m) - 1 covers their high bits.
				hi |= w & ((m & -m) - 1)
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			hi |= w
			i += 8
		}
		if i >= len(b) {
			s.i = i
			return escaped, false, s.fail("unterminated string")
		}
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return escaped, !escaped && hi&msb == 0, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				s.i = i
				return escaped, false, s.fail("unterminated escape")
			}
			switch escapeLen[b[i+1]] {
			case 2:
				i += 2
			case 6:
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					s.i = i
					return escaped, false, s.fail("invalid \\u escape")
				}
				i += 6
			default:
				s.i = i
				return escaped, false, s.fail("invalid escape")
			}
		case c < 0x20:
			s.i = i
			return escaped, false, s.fail("control character in string")
		default:
			hi |= uint64(c)
			i++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	default:
		s.i = i
		return s.fail("invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			return s.fail("invalid number fraction")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			return s.fail("invalid number exponent")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	s.i = i
	return true
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return true
}

func (s *scanner) push(object bool) {
	w, bit := s.depth>>6, uint(s.depth&63)
	if w == len(s.stack) {
		s.stack = append(s.stack, 0)
	}
	if object {
		s.stack[w] |= 1 << bit
	} else {
		s.stack[w] &^= 1 << bit
	}
	s.depth++
}

func (s *scanner) topIsObject() bool {
	d := s.depth - 1
	return s.stack[d>>6]&(1<<uint(d&63)) != 0
}

// value scans one JSON value (after optional whitespace) without decoding
// it, validating its full syntax, and returns its kind and range. Nesting is
// unbounded, as in V8's iterative JSON.parse; the container stack costs one
// bit per level.
func (s *scanner) value() (span, bool) {
	c := s.peek()
	sp := span{start: s.i}
	switch c {
	case '"':
		sp.kind = jString
		esc, plain, ok := s.stringEnd()
		sp.escaped, sp.plain, sp.end = esc, plain, s.i
		return sp, ok
	case '{':
		sp.kind = jObject
	case '[':
		sp.kind = jArray
	case 't':
		sp.kind = jTrue
		ok := s.literal("true")
		sp.end = s.i
		return sp, ok
	case 'f':
		sp.kind = jFalse
		ok := s.literal("false")
		sp.end = s.i
		return sp, ok
	case 'n':
		sp.kind = jNull
		ok := s.literal("null")
		sp.end = s.i
		return sp, ok
	default:
		if c == '-' || c >= '0' && c <= '9' {
			sp.kind = jNumber
			ok := s.number()
			sp.end = s.i
			return sp, ok
		}
		if s.i >= len(s.b) {
			return sp, s.fail("unexpected end of input")
		}
		return sp, s.fail("unexpected character")
	}
	if !s.skipContainer() {
		return sp, false
	}
	sp.end = s.i
	return sp, true
}

// skipContainer validates the object or array opening at s.i.
func (s *scanner) skipContainer() bool {
	base := s.depth
	for {
		// A value is expected at s.i (after whitespace).
		c := s.peek()
		switch c {
		case '{':
			s.i++
			if s.peek() == '}' {
				s.i++
				break
			}
			s.push(true)
			if !s.objectKey() {
				return false
			}
			continue
		case '[':
			s.i++
			if s.peek() == ']' {
				s.i++
				break
			}
			s.push(false)
			continue
		case '"':
			if !s.skipString() {
				return false
			}
		case 't':
			if !s.literal("true") {
				return false
			}
		case 'f':
			if !s.literal("false") {
				return false
			}
		case 'n':
			if !s.literal("null") {
				return false
			}
		default:
			if c == '-' || c >= '0' && c <= '9' {
				if !s.number() {
					return false
				}
				break
			}
			if s.i >= len(s.b) {
				return s.fail("unexpected end of input")
			}
			return s.fail("unexpected character")
		}
		// After a value: close containers or continue with a comma.
		for {
			if s.depth == base {
				return true
			}
			c := s.peek()
			obj := s.topIsObject()
			if c == ',' {
				s.i++
				if obj && !s.objectKey() {
					return false
				}
				break
			}
			if obj && c == '}' || !obj && c == ']' {
				s.i++
				s.depth--
				continue
			}
			if s.i >= len(s.b) {
				return s.fail("unexpected end of input")
			}
			if obj { // the words of the object and array parsers (key, array), so every path names a defect alike
				return s.fail("expected , or }")
			}
			return s.fail("expected , or ]")
		}
	}
}

// objectKey scans `"key" :` inside an object.
func (s *scanner) objectKey() bool {
	if s.peek() != '"' {
		return s.fail("expected object key")
	}
	if end, ok := jsonscan.ShortString(s.b, s.i); ok {
		s.i = end // most keys: no call
	} else if _, _, ok := s.stringEnd(); !ok {
		return false
	}
	if s.peek() != ':' {
		return s.fail("expected :")
	}
	s.i++
	return true
}

// key scans an object key and returns its decoded bytes (valid until the
// next key call) followed by the colon.
func (s *scanner) key() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, s.fail("expected object key")
	}
	start := s.i
	var esc bool
	if end, short := jsonscan.ShortString(s.b, s.i); short {
		s.i = end // a key of under eight plain bytes: no call
	} else {
		var ok bool
		if esc, _, ok = s.stringEnd(); !ok {
			return nil, false
		}
	}
	k := s.b[start+1 : s.i-1]
	if esc {
		s.tmp = unquoteAppend(s.tmp[:0], k)
		k = s.tmp
	}
	if s.peek() != ':' {
		return nil, s.fail("expected :")
	}
	s.i++
	return k, true
}

// objectFields iterates the members of the object at s.i, calling f with
// each decoded key and s.i at the value; f must consume the value.
func (s *scanner) object(f func(key []byte) bool) bool {
	if s.peek() != '{' {
		return s.fail("expected object")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		k, ok := s.key()
		if !ok || !f(k) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			if s.i >= len(s.b) {
				return s.fail("unexpected end of input")
			}
			return s.fail("expected , or }")
		}
	}
}

// array iterates the elements of the array at s.i; f must consume each.
func (s *scanner) array(f func() bool) bool {
	if s.peek() != '[' {
		return s.fail("expected array")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !f() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			if s.i >= len(s.b) {
				return s.fail("unexpected end of input")
			}
			return s.fail("expected , or ]")
		}
	}
}

// sameString reports whether the value at s.i is the string whose body is
// exactly prev, which must be plain (ASCII without a quote, backslash or
// control byte, as a plain span's bytes are): then it is valid, plain, and
// its span is returned with s.i past it; else s.i is unchanged.
func (s *scanner) sameString(prev string) (span, bool) {
	i := s.i
	end := i + len(prev) + 2
	if end > len(s.b) || s.b[i] != '"' || s.b[end-1] != '"' || string(s.b[i+1:end-1]) != prev {
		return span{}, false
	}
	s.i = end
	return span{kind: jString, start: i, end: end, plain: true}, true
}
