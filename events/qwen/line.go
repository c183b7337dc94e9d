package qwen

import (
	"bytes"
	"unicode/utf8"
)

// What Qwen's reader does with one physical line (jsonl-utils `read` →
// parseLineTolerantWithIntegrity, Qwen Code 0.24.4):
//
//  1. node:readline splits on "\n", "\r\n" and a lone "\r"; the framer here
//     splits on "\n", so a line is further cut at every "\r".
//  2. Each piece is String.prototype.trim()med (JavaScript whitespace,
//     including U+00A0, U+FEFF and the other Unicode spaces); empty pieces
//     are skipped.
//  3. JSON.parse of the whole piece: an object is one record; any other
//     JSON value yields nothing and marks the read incomplete.
//  4. If JSON.parse throws, recoverObjectsFromLine scans the piece with a
//     string-aware brace counter (braces only — brackets are not tracked)
//     and JSON.parses every top-level `{…}` it closes; the read is complete
//     only if every fragment parsed, nothing but whitespace lay between
//     them, and no object or string was left open. This is the `}{`
//     recovery of Qwen #3606: `{A}{B}`, `{A} {B}` and `junk{A}` all yield
//     their objects; `{A}{B` yields A and is incomplete.

// lineResult is what one physical line yielded.
type lineResult struct {
	// recs are the objects in line order; start offsets are line-relative.
	// The slice and its elements are reused by the next line; the Records
	// they point to are not.
	recs     []parsed
	complete bool
	detail   string // why the line is incomplete
}

// decodeLine applies Qwen's line reading to b.
func (p *recordParser) decodeLine(b []byte, out *lineResult) {
	out.recs = out.recs[:0]
	p.esc = p.esc[:0]
	out.complete, out.detail = true, ""
	for off := 0; off <= len(b); {
		end := bytes.IndexByte(b[off:], '\r')
		if end < 0 {
			end = len(b)
		} else {
			end += off
		}
		piece := b[off:end]
		lead := len(piece)
		piece = jsTrimLeft(piece)
		lead -= len(piece)
		piece = jsTrimRight(piece)
		if len(piece) > 0 {
			p.decodePiece(piece, off+lead, out)
		}
		off = end + 1
	}
}

// object parses the whole of b as a record into the next slot of out.recs
// and returns it, or returns nil (p.s.err says why) and leaves out.recs as
// it was.
func (p *recordParser) object(b []byte, out *lineResult) *parsed { return p.objectAt(b, true, out) }

// objectAt is object; unless whole is set the object may end before len(b)
// (its parsed.end says where).
func (p *recordParser) objectAt(b []byte, whole bool, out *lineResult) *parsed {
	if len(out.recs) < cap(out.recs) {
		out.recs = out.recs[:len(out.recs)+1]
	} else {
		out.recs = append(out.recs, parsed{})
	}
	pr := &out.recs[len(out.recs)-1]
	light := p.light
	p.light = !p.needs(len(out.recs) - 1)
	ok := p.parseObject(b, whole, pr)
	p.light = light
	if !ok {
		*pr = parsed{}
		out.recs = out.recs[:len(out.recs)-1]
		return nil
	}
	return pr
}

func (p *recordParser) incomplete(out *lineResult, detail string) {
	if out.complete {
		out.complete, out.detail = false, detail
	}
}

func (p *recordParser) decodePiece(b []byte, base int, out *lineResult) {
	if b[0] == '{' {
		if pr := p.object(b, out); pr != nil {
			pr.start, pr.end = base, base+pr.end
			return
		}
	} else {
		p.s.reset(b)
		sp, ok := p.s.value()
		if ok {
			p.s.ws()
		}
		if ok && p.s.i == len(b) {
			p.incomplete(out, "a JSON "+sp.kind.String()+", not a record object")
			return
		}
	}
	p.recover(b, base, out)
}

// recover is recoverObjectsFromLine. JavaScript walks UTF-16 code units;
// every byte it reacts to is ASCII and no multi-byte UTF-8 sequence contains
// an ASCII byte, so walking bytes finds the same fragments.
func (p *recordParser) recover(b []byte, base int, out *lineResult) {
	var (
		depth             int
		inString, escaped bool
		start             = -1
		complete          = true
		found             int
		firstErr          string
	)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if escaped {
			escaped = false
			continue
		}
		if inString {
			// Jump to the next quote or backslash: strings hold the bulk.
			j := indexQuoteOrBackslash(b[i:])
			if j < 0 {
				break // an unterminated string runs to the end of the line
			}
			i += j
			if b[i] == '\\' {
				escaped = true
			} else {
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			if depth == 0 {
				complete = false
			}
			inString = true
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}':
			depth--
			if depth == 0 && start >= 0 {
				frag := b[start : i+1]
				if pr := p.object(frag, out); pr != nil {
					pr.start, pr.end = base+start, base+i+1
					found++
				} else {
					complete = false
					if firstErr == "" {
						firstErr = "glued fragment at byte " + itoa(base+start) + ": " + p.s.err.Error()
					}
				}
				start = -1
			} else if depth < 0 {
				complete = false
				depth, start = 0, -1
			}
		case depth == 0:
			if c < utf8.RuneSelf {
				if !isASCIISpace(c) {
					complete = false
				}
			} else {
				r, size := utf8.DecodeRune(b[i:])
				if !isJSSpace(r) {
					complete = false
				}
				i += size - 1
			}
		}
	}
	if complete && found > 0 && depth == 0 && !inString && start == -1 {
		return
	}
	switch {
	case firstErr != "":
		p.incomplete(out, firstErr)
	case found == 0:
		p.incomplete(out, "not JSON and no record recoverable")
	case depth != 0 || inString || start != -1:
		p.incomplete(out, "glued records: the last one is unterminated")
	default:
		p.incomplete(out, "glued records with data between them")
	}
}

func indexQuoteOrBackslash(b []byte) int {
	q := bytes.IndexByte(b, '"')
	var bs int
	if q < 0 {
		bs = bytes.IndexByte(b, '\\')
	} else {
		bs = bytes.IndexByte(b[:q], '\\')
	}
	if bs >= 0 {
		return bs
	}
	return q
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}

// isJSSpace is JavaScript's WhiteSpace ∪ LineTerminator (what trim() and
// /\s/ match).
func isJSSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func jsTrimLeft(b []byte) []byte {
	for len(b) > 0 {
		if c := b[0]; c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				return b
			}
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		if !isJSSpace(r) {
			return b
		}
		b = b[size:]
	}
	return b
}

func jsTrimRight(b []byte) []byte {
	for len(b) > 0 {
		if c := b[len(b)-1]; c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				return b
			}
			b = b[:len(b)-1]
			continue
		}
		r, size := utf8.DecodeLastRune(b)
		if !isJSSpace(r) {
			return b
		}
		b = b[:len(b)-size]
	}
	return b
}

func jsTrim(b []byte) []byte { return jsTrimRight(jsTrimLeft(b)) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}
