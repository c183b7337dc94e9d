package ledger

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// This file is Decode's JSON reader. Decode used to unmarshal every line into
// a map[string]json.RawMessage and re-unmarshal each string; that dominated a
// reconcile. The scanner below validates the whole line exactly as
// encoding/json does (decodeOracle in oracle_test.go is the specification,
// FuzzDecodeDifferential holds the two together) but only remembers where the
// eight known keys' values are, and builds strings only for the ones a Record
// keeps.

// Field slots for the keys a Record reads. Any other key is validated and
// skipped.
const (
	fV = iota
	fPromptID
	fState
	fTailUUID
	fTerminal
	fCode
	fStopReason
	fAt
	nFields
)

// maxDepth is encoding/json's nesting limit; a line nested deeper is a syntax
// error there, so it must be one here.
const maxDepth = 10000

// span locates a value in the line: line[start:end]. end == 0 means the key
// was absent (a value never ends at offset 0: '{' comes first). plain marks a
// string whose content is ASCII without escapes, so its bytes are its value.
type span struct {
	start, end int
	plain      bool
}

type fields [nFields]span

// strClass flags the bytes a string scan must stop at: the quote, the
// backslash, control characters (invalid unescaped) and non-ASCII bytes
// (legal, but decoded with UTF-8 coercion, so not plain).
var strClass = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// syntaxErr describes what encoding/json would reject at b[i], in its words
// (the offset is extra).
func syntaxErr(b []byte, i int, context string) error {
	if i >= len(b) {
		return fmt.Errorf("ledger: %w: not a JSON object: unexpected end of JSON input", ErrMalformed)
	}
	return fmt.Errorf("ledger: %w: not a JSON object: invalid character %q %s (offset %d)",
		ErrMalformed, rune(b[i]), context, i)
}

// scanObject validates line as exactly one JSON object surrounded by optional
// whitespace and records in f the span of the last value of each known key
// (the last duplicate wins, as it does in a map).
func scanObject(line []byte, f *fields) error {
	i := skipSpace(line, 0)
	if i >= len(line) {
		return syntaxErr(line, i, "")
	}
	if line[i] != '{' {
		return fmt.Errorf("ledger: %w: not a JSON object: value begins with %q", ErrMalformed, rune(line[i]))
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return syntaxErr(line, i, "looking for beginning of object key string")
			}
			ks := i
			var plain bool
			var err error
			if i, plain, err = scanString(line, i); err != nil {
				return err
			}
			slot := keySlot(line[ks+1:i-1], plain)
			i = skipSpace(line, i)
			if i >= len(line) || line[i] != ':' {
				return syntaxErr(line, i, "after object key")
			}
			i = skipSpace(line, i+1)
			vs := i
			// Strings and numbers are nearly every value; dispatch them here.
			if i >= len(line) {
				return syntaxErr(line, i, "")
			}
			switch c := line[i]; {
			case c == '"':
				i, plain, err = scanString(line, i)
			case c == '-' || ('0' <= c && c <= '9'):
				plain = false
				i, err = scanNumber(line, i)
			default:
				i, plain, err = scanValue(line, i)
			}
			if err != nil {
				return err
			}
			if slot >= 0 {
				f[slot] = span{vs, i, plain}
			}
			i = skipSpace(line, i)
			if i >= len(line) {
				return syntaxErr(line, i, "")
			}
			if line[i] == ',' {
				i = skipSpace(line, i+1)
				continue
			}
			if line[i] == '}' {
				i++
				break
			}
			return syntaxErr(line, i, "after object key:value pair")
		}
	}
	if i = skipSpace(line, i); i < len(line) {
		return syntaxErr(line, i, "after top-level value")
	}
	return nil
}

// keySlot maps a key's raw content (between the quotes) to its field slot,
// or -1. Matching is exact and case-sensitive, as map keys are.
func keySlot(raw []byte, plain bool) int {
	if !plain {
		// An escaped key ("\u0076") matches by its decoded form. Every escape
		// decodes to at least one byte per six, so a raw key longer than six
		// times the longest name cannot match.
		if len(raw) > 6*len("stopReason") {
			return -1
		}
		var buf [64]byte
		raw = appendUnquoted(buf[:0], raw)
	}
	switch string(raw) {
	case "v":
		return fV
	case "promptId":
		return fPromptID
	case "state":
		return fState
	case "tailUuid":
		return fTailUUID
	case "terminal":
		return fTerminal
	case "code":
		return fCode
	case "stopReason":
		return fStopReason
	case "at":
		return fAt
	}
	return -1
}

// scanString validates the string starting at b[i] == '"' and returns the
// offset just past its closing quote. plain reports ASCII content without
// escapes.
func scanString(b []byte, i int) (end int, plain bool, err error) {
	plain = true
	i++
	for {
		for i < len(b) && !strClass[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, false, syntaxErr(b, i, "")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return 0, false, syntaxErr(b, i+1, "")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) {
						return 0, false, syntaxErr(b, k, "")
					}
					if hexVal(b[k]) < 0 {
						return 0, false, syntaxErr(b, k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return 0, false, syntaxErr(b, i+1, "in string escape code")
			}
		case c < 0x20:
			return 0, false, syntaxErr(b, i, "in string literal")
		default: // non-ASCII: legal, decoded with U+FFFD coercion
			plain = false
			i++
		}
	}
}

func hexVal(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 reads the four hex digits of a \u escape already validated by
// scanString.
func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// appendUnquoted appends the value of a validated string's raw content the
// way encoding/json decodes it: a \uD800-\uDBFF escape followed by a
// \uDC00-\uDFFF escape is one code point, any other surrogate escape is
// U+FFFD, and each byte of invalid UTF-8 becomes U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if 0xD800 <= rr && rr < 0xE000 {
					if rr < 0xDC00 && r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if lo := hex4(s[r+2:]); 0xDC00 <= lo && lo < 0xE000 {
							dst = utf8.AppendRune(dst, 0x10000+(rr-0xD800)<<10|(lo-0xDC00))
							r += 6
							continue
						}
					}
					rr = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// scanValue validates the value starting at b[i] (inside the top-level
// object, so at depth 1) and returns the offset just past it. plain is as for
// scanString and false for anything but a string.
func scanValue(b []byte, i int) (end int, plain bool, err error) {
	if i >= len(b) {
		return 0, false, syntaxErr(b, i, "")
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		end, err = skipContainer(b, i)
		return end, false, err
	}
	end, err = scanScalar(b, i)
	return end, false, err
}

// scanScalar validates a number or literal starting at b[i].
func scanScalar(b []byte, i int) (int, error) {
	switch c := b[i]; {
	case c == '-' || ('0' <= c && c <= '9'):
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '"':
		end, _, err := scanString(b, i)
		return end, err
	}
	return 0, syntaxErr(b, i, "looking for beginning of value")
}

func scanLiteral(b []byte, i int, lit string) (int, error) {
	for k := 1; k < len(lit); k++ {
		if i+k >= len(b) || b[i+k] != lit[k] {
			return 0, syntaxErr(b, i+k, "in literal "+lit+" (expecting '"+lit[k:k+1]+"')")
		}
	}
	return i + len(lit), nil
}

// scanNumber validates JSON's number grammar strictly:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, syntaxErr(b, i, "in numeric literal")
		}
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, syntaxErr(b, i, "after decimal point in numeric literal")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, syntaxErr(b, i, "in exponent of numeric literal")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i, nil
}

// skipContainer validates the array or object starting at b[i], nested in
// the top-level object, and returns the offset just past it. It keeps its
// own stack rather than recursing, so a line nested to encoding/json's limit
// costs a byte per level rather than a stack frame.
func skipContainer(b []byte, i int) (int, error) {
	var inline [32]byte
	stack := inline[:0] // '{' or '[' per open container
	var err error
	for {
		// b[i] starts a value.
		if c := b[i]; c == '{' || c == '[' {
			stack = append(stack, c)
			if 1+len(stack) > maxDepth {
				return 0, syntaxErr(b, i, "exceeded max depth")
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				stack = stack[:len(stack)-1]
				i++
			} else {
				if c == '{' {
					if i, err = skipKey(b, i); err != nil {
						return 0, err
					}
				}
				if i >= len(b) {
					return 0, syntaxErr(b, i, "")
				}
				continue
			}
		} else if i, err = scanScalar(b, i); err != nil {
			return 0, err
		}
		// A value ended: close containers until one continues with ','.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, syntaxErr(b, i, "")
			}
			open := stack[len(stack)-1]
			if b[i] == open+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				if open == '{' {
					return 0, syntaxErr(b, i, "after object key:value pair")
				}
				return 0, syntaxErr(b, i, "after array element")
			}
			i = skipSpace(b, i+1)
			if open == '{' {
				if i, err = skipKey(b, i); err != nil {
					return 0, err
				}
			}
			if i >= len(b) {
				return 0, syntaxErr(b, i, "")
			}
			break
		}
	}
}

// skipKey validates `"key" :` plus the whitespace after it and returns the
// offset of the value.
func skipKey(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, syntaxErr(b, i, "looking for beginning of object key string")
	}
	i, _, err := scanString(b, i)
	if err != nil {
		return 0, err
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, syntaxErr(b, i, "after object key")
	}
	return skipSpace(b, i+1), nil
}

// isString reports whether the field holds a JSON string.
func (f *fields) isString(line []byte, k int) bool {
	return f[k].end > 0 && line[f[k].start] == '"'
}

// content is a string field's raw bytes between the quotes.
func (f *fields) content(line []byte, k int) []byte {
	return line[f[k].start+1 : f[k].end-1]
}

// equals reports whether field k is a string whose decoded value is want.
func (f *fields) equals(line []byte, k int, want string) bool {
	if !f.isString(line, k) {
		return false
	}
	raw := f.content(line, k)
	if f[k].plain {
		return string(raw) == want
	}
	if len(raw) > 6*len(want) {
		return false
	}
	var buf [64]byte
	return string(appendUnquoted(buf[:0], raw)) == want
}

// appendString appends field k's decoded string value.
func (f *fields) appendString(dst, line []byte, k int) []byte {
	if f[k].plain {
		return append(dst, f.content(line, k)...)
	}
	return appendUnquoted(dst, f.content(line, k))
}

// number is field k as a finite float64, with the reference's rules: a JSON
// number (validated by the scan) that ParseFloat reads and that is not
// infinite once parsed (JSON.parse turns 1e400 into Infinity). exact reports
// an integer below 2^53 in magnitude, which int64(x) holds exactly.
func (f *fields) number(line []byte, k int) (x float64, exact, ok bool) {
	if f[k].end == 0 {
		return 0, false, false
	}
	m := line[f[k].start:f[k].end]
	if !(m[0] == '-' || (m[0] >= '0' && m[0] <= '9')) {
		return 0, false, false
	}
	// Integers of up to 15 digits are below 2^53, so they convert exactly
	// and ParseFloat would return the same value; Date.now() and v take
	// this path.
	digits := m
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) <= 15 {
		var n int64
		for _, c := range digits {
			if c < '0' || c > '9' {
				goto slow
			}
			n = n*10 + int64(c-'0')
		}
		x = float64(n)
		if m[0] == '-' {
			x = -x // -0 stays -0, as ParseFloat returns it
		}
		return x, true, true
	}
slow:
	x, err := strconv.ParseFloat(string(m), 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false, false
	}
	return x, x == math.Trunc(x) && math.Abs(x) < 1<<53, true
}
