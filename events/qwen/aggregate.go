package qwen

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events"
)

// aggregate is aggregateTranscriptRecordFragments: the first fragment's
// fields, every fragment's message parts concatenated (role from the first
// message), and the greatest valid timestamp (JavaScript string order).
func aggregate(fs []events.Event) *Record {
	first := fs[0].Body.(*Record)
	base := *first
	var msg *Content
	if first.Message != nil {
		msg = &Content{Role: first.Message.Role, Parts: append([]Part{}, first.Message.Parts...)}
	}
	for _, f := range fs[1:] {
		r := f.Body.(*Record)
		if r.Message != nil {
			if msg != nil {
				msg = &Content{Role: msg.Role, Parts: append(msg.Parts, r.Message.Parts...)}
			} else {
				msg = &Content{Role: r.Message.Role, Parts: append([]Part{}, r.Message.Parts...)}
			}
		}
		if r.TimeOK && (!base.TimeOK || jsLess(base.Timestamp, r.Timestamp)) {
			base.Timestamp, base.TimeMs, base.TimeOK = r.Timestamp, r.TimeMs, true
		}
	}
	base.Message = msg
	return &base
}

// jsLess compares strings by UTF-16 code units, as JavaScript's < does.
func jsLess(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return ua < ub
			}
			return ra < rb // same high surrogate: the low surrogates order as the runes
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b != ""
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}
