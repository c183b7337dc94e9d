package qwen

import (
	"strings"
	"unicode/utf8"
)

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
// Small enough to inline: a record's ten or so fields are mostly plain
// strings or absent, and the call cost more than the test.
func (p *recordParser) bytesOf(b []byte, sp span) []byte {
	if sp.plain { // only a string is plain
		return b[sp.start+1 : sp.end-1]
	}
	return p.decoded(b, sp)
}

// decoded is bytesOf for any span that is not plain: nil unless a string,
// its body itself when it has no escapes and is valid UTF-8, else its
// decoding in p.esc.
func (p *recordParser) decoded(b []byte, sp span) []byte {
	if sp.kind != jString {
		return nil
	}
	raw := b[sp.start+1 : sp.end-1]
	if !sp.escaped && utf8.Valid(raw) {
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
	// Not cleared: the next record overwrites the entries, and putParser
	// clears them before the parser is pooled.
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

// repeated flags the record keys whose values usually repeat on every
// record of a session: parseObject compares the bytes where the value lies
// with the last plain value seen (sameString) instead of scanning and
// decoding them.
const repeated = 1<<kSessionID | 1<<kCwd | 1<<kVersion

// repeatedStr is the string of a repeated field's decoded bytes b: the last
// value seen when same says b is it, else interned in cache.
func (p *recordParser) repeatedStr(k int, same uint32, cache *string, b []byte) string {
	if same>>k&1 != 0 {
		return p.seen[k]
	}
	return intern(cache, b)
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
	case "success":
		return "success"
	case "cancelled":
		return "cancelled"
	case "not_started":
		return "not_started"
	case "error":
		return "error"
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
