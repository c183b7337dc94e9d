package events

import (
	"unicode/utf8"
)

// AppendJSString appends s as a JSON string literal exactly as JavaScript's
// JSON.stringify writes it: only '"', '\\' and control characters below
// U+0020 are escaped (\b \f \n \r \t or \u00XX); '<', '>', '&', U+2028 and
// U+2029 are written as is (unlike encoding/json). Invalid UTF-8 is written as
// U+FFFD, which is what Node's UTF-8 decoding of the same bytes produces.
// Writers use it so that the bytes tailproof appends equal what Qwen Code or
// dsh would have written.
func AppendJSString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
