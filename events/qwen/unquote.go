package qwen

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// Decoding the values the scanner found: strings (with JSON.parse's
// replacement of invalid UTF-8 and lone surrogates) and truthiness.

// spanString decodes a string span. Strings without escapes and with valid UTF-8
// are copied once; everything else goes through unquoteAppend, which
// replaces invalid UTF-8 and lone surrogates with U+FFFD as encoding/json
// does.
func spanString(b []byte, sp span) string {
	raw := b[sp.start+1 : sp.end-1]
	if sp.plain || !sp.escaped && utf8.Valid(raw) {
		return string(raw)
	}
	return string(unquoteAppend(make([]byte, 0, len(raw)), raw))
}

// unquoteAppend decodes the body of a syntactically valid JSON string.
func unquoteAppend(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		// Runs of plain ASCII are copied whole.
		j := i
		for j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c == '\\' {
			switch s[i+1] {
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
				r := jsonscan.Hex4(s[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if d := utf16.DecodeRune(r, jsonscan.Hex4(s[i+2:])); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[i+1])
			}
			i += 2
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// truthySpan mirrors JavaScript truthiness of a JSON value.
func truthySpan(b []byte, sp span) bool {
	switch sp.kind {
	case jAbsent, jNull, jFalse:
		return false
	case jString:
		return sp.end-sp.start > 2
	case jNumber:
		f, _ := strconv.ParseFloat(string(b[sp.start:sp.end]), 64)
		return f != 0
	}
	return true
}
