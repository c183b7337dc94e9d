package jsonscan

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// MaxDepth is encoding/json's nesting limit: a value nested deeper is a
// syntax error there. The top-level value is at depth 1.
const MaxDepth = 10000

// SyntaxError is input encoding/json would reject. The callers word it for
// their own package, so it carries what they need: where, the byte found
// there, and encoding/json's description of the expectation.
type SyntaxError struct {
	Offset  int    // where the input goes wrong; its length when it ends early
	End     bool   // the input ended inside a value
	Char    byte   // the offending byte, unless End
	Context string // what follows "invalid character 'c' " in encoding/json's wording
}

func (e *SyntaxError) Error() string {
	if e.End {
		return "jsonscan: unexpected end of JSON input"
	}
	return fmt.Sprintf("jsonscan: invalid character %q %s (offset %d)", rune(e.Char), e.Context, e.Offset)
}

// errAt is the error for b[i], or for the end when i is past it. Kept out of
// line so the scanning loops that call it stay small.
//
//go:noinline
func errAt(b []byte, i int, context string) error {
	if i >= len(b) {
		return &SyntaxError{Offset: len(b), End: true}
	}
	return &SyntaxError{Offset: i, Char: b[i], Context: context}
}

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace (space, tab, newline, carriage return; not \v, \f or a
// byte order mark).
func SkipSpace(b []byte, i int) int {
	// One test settles the usual case, a byte above the space.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// special flags the bytes a string scan must stop at: the quote, the
// backslash, control characters (invalid unescaped) and non-ASCII bytes
// (legal, but decoded with UTF-8 coercion).
var special = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopMask flags (high bit of the byte) the bytes of w that end a run of
// plain string bytes: a quote, a backslash or a control byte. Only the
// lowest flag is exact (a borrow may flag bytes above it), which is all
// String uses: x^0x02 is below 0x21 exactly when x is below 0x20 or is '"'.
func stopMask(w uint64) uint64 {
	qc := w ^ (lsb * 0x02)
	bs := w ^ (lsb * '\\')
	return ((qc-lsb*0x21)&^qc | (bs-lsb)&^bs) & msb
}

// ShortString is String for a string at b[i] == '"' whose body is fewer
// than eight bytes without escapes (a key, a type, a short value): its end,
// or ok false, and nothing known, for any other string; then call String.
// It does not say whether the body is ASCII. Small enough to inline, it
// saves the call for most keys.
func ShortString(b []byte, i int) (end int, ok bool) {
	if s := b[i+1:]; len(s) >= 8 {
		j := bits.TrailingZeros64(stopMask(binary.LittleEndian.Uint64(s))) >> 3
		if j < 8 && s[j] == '"' {
			return i + 2 + j, true
		}
	}
	return 0, false
}

// String validates the string starting at b[i] == '"' and returns the
// offset just past its closing quote. escaped reports a backslash escape and
// nonASCII a byte >= 0x80; without either, the content is its own value.
func String(b []byte, i int) (end int, escaped, nonASCII bool, err error) {
	i++
	var hi uint64        // the OR of the bytes the word loop passed
	blocksFrom := 0      // skipBlocks may start at an escape at or after this
	lastEsc := -denseGap // where the last escape began
	if useVector && len(b)-i >= vectorPrefix+64 {
		end, esc, na, st := vectorString(b, i)
		if st == blocksDone {
			return end, esc, na, nil
		}
		// Below a block from the end, or at an error: the scalar loop
		// reads on (and names it).
		i, escaped, nonASCII, blocksFrom = end, esc, na, len(b)
	}
	for {
		// Eight bytes at a time up to the first quote, backslash or control
		// byte: strings holding tool output run to megabytes.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i : i+8])
			if m := stopMask(w); m != 0 {
				hi |= w & ((m & -m) - 1)
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			hi |= w
			i += 8
		}
		if i+8 > len(b) {
			// The tail, shorter than a word; a word stop is always special.
			for i < len(b) && !special[b[i]] {
				i++
			}
		}
		if i >= len(b) {
			return 0, false, false, errAt(b, i, "")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, nonASCII || hi&msb != 0, nil
		case c == '\\':
			escaped = true
			if i-lastEsc < denseGap && len(b)-i >= blockMin && i >= blocksFrom {
				// Escapes close together: a block at a time from here.
				end, high, st := skipBlocks(b, i)
				nonASCII = nonASCII || high
				if st == blocksDone {
					return end, true, nonASCII || hi&msb != 0, nil
				}
				if end != i {
					i, lastEsc = end, end
					continue
				}
				blocksFrom = len(b) // refused at once: an error is near
			}
			lastEsc = i
			if i+1 >= len(b) {
				return 0, false, false, errAt(b, i+1, "")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				// Digit by digit, so the error names the offending one.
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) || hexVal(b[k]) < 0 {
						return 0, false, false, errAt(b, k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return 0, false, false, errAt(b, i+1, "in string escape code")
			}
		case c < 0x20:
			return 0, false, false, errAt(b, i, "in string literal")
		default:
			nonASCII = true
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

// Hex4 reads the four hex digits at the start of b (the digits of a \u
// escape), or returns -1 when there are fewer than four or one is not hex.
func Hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	a, c, d, e := hexVal(b[0]), hexVal(b[1]), hexVal(b[2]), hexVal(b[3])
	if a|c|d|e < 0 {
		return -1
	}
	return a<<12 | c<<8 | d<<4 | e
}

// AppendUnquote appends the value of a string's content (the bytes between
// the quotes, already validated by String) decoded as encoding/json decodes
// it: escapes resolved, a \uD800-\uDBFF escape followed by a \uDC00-\uDFFF
// escape joined into one code point, any other surrogate escape and each
// byte of invalid UTF-8 replaced by U+FFFD.
func AppendUnquote(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		// Copy the run that needs no decoding in one append.
		w := r
		for w < len(s) && s[w] != '\\' && s[w] < utf8.RuneSelf {
			w++
		}
		dst = append(dst, s[r:w]...)
		if r = w; r == len(s) {
			break
		}
		if s[r] != '\\' {
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
			continue
		}
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
			rr := Hex4(s[r+2:])
			r += 6
			if 0xD800 <= rr && rr < 0xE000 {
				if rr < 0xDC00 && r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
					if lo := Hex4(s[r+2:]); 0xDC00 <= lo && lo < 0xE000 {
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
	}
	return dst
}

// Number validates JSON's number grammar strictly,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, starting at b[i], and
// returns the offset just past it. integer reports neither a fraction nor an
// exponent.
func Number(b []byte, i int) (end int, integer bool, err error) {
	if i < len(b) && b[i] == '-' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, errAt(b, i, "in numeric literal")
		}
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	default:
		return 0, false, errAt(b, i, "looking for beginning of value")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, errAt(b, i, "after decimal point in numeric literal")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, errAt(b, i, "in exponent of numeric literal")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i, integer, nil
}

// Literal validates the word lit (true, false or null) at b[i] and returns
// the offset just past it.
func Literal(b []byte, i int, lit string) (int, error) {
	for k := range len(lit) {
		if i+k >= len(b) || b[i+k] != lit[k] {
			if k == 0 {
				return 0, errAt(b, i, "looking for beginning of value")
			}
			return 0, errAt(b, i+k, "in literal "+lit+" (expecting '"+lit[k:k+1]+"')")
		}
	}
	return i + len(lit), nil
}

// scalar validates a string, number or literal at b[i].
func scalar(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errAt(b, i, "")
	}
	switch c := b[i]; {
	case c == '-' || ('0' <= c && c <= '9'):
		end, _, err := Number(b, i)
		return end, err
	case c == 't':
		return Literal(b, i, "true")
	case c == 'f':
		return Literal(b, i, "false")
	case c == 'n':
		return Literal(b, i, "null")
	case c == '"':
		if end, ok := ShortString(b, i); ok {
			return end, nil
		}
		end, _, _, err := String(b, i)
		return end, err
	}
	return 0, errAt(b, i, "looking for beginning of value")
}

// SkipValue validates the value starting at b[i] (no whitespace before it)
// and returns the offset just past it. depth is how many containers enclose
// it; a container nested deeper than maxDepth in all is an error, as one
// deeper than MaxDepth is for encoding/json. It keeps its own stack rather
// than recursing, so input nested to encoding/json's limit costs a byte per
// level rather than a stack frame.
func SkipValue(b []byte, i, depth, maxDepth int) (int, error) {
	var inline [32]byte
	stack := inline[:0] // '{' or '[' per open container
	var err error
	for {
		// b[i] starts a value.
		if i < len(b) && (b[i] == '{' || b[i] == '[') {
			c := b[i]
			stack = append(stack, c)
			if depth+len(stack) > maxDepth {
				return 0, errAt(b, i, "exceeded max depth")
			}
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				stack = stack[:len(stack)-1]
				i++
			} else {
				if c == '{' {
					if i, err = key(b, i); err != nil {
						return 0, err
					}
				}
				continue
			}
		} else if i, err = scalar(b, i); err != nil {
			return 0, err
		}
		// A value ended: close containers until one continues with ','.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return 0, errAt(b, i, "")
			}
			open := stack[len(stack)-1]
			if b[i] == open+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				if open == '{' {
					return 0, errAt(b, i, "after object key:value pair")
				}
				return 0, errAt(b, i, "after array element")
			}
			i = SkipSpace(b, i+1)
			if open == '{' {
				if i, err = key(b, i); err != nil {
					return 0, err
				}
			}
			break
		}
	}
}

// key validates `"key" :` and the whitespace after it, and returns the
// offset of the value.
func key(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, errAt(b, i, "looking for beginning of object key string")
	}
	if end, ok := ShortString(b, i); ok {
		i = end
	} else {
		end, _, _, err := String(b, i)
		if err != nil {
			return 0, err
		}
		i = end
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, errAt(b, i, "after object key")
	}
	return SkipSpace(b, i+1), nil
}
