package v0

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// member is one key of a JSON object and the raw bytes of its value
// (validated when object returned it).
type member = Member

// object validates b as one JSON value (surrounding whitespace allowed, as
// JSON.parse allows it) and, when it is an object, returns its members in
// order. ok is false for a valid value that is not an object. Duplicate keys
// are returned as found; callers take the last, as JSON.parse does.
func object(dst []member, b []byte) (ms []member, ok bool, err error) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) {
		return dst, false, &jsonscan.SyntaxError{Offset: len(b), End: true}
	}
	if b[i] != '{' {
		end, err := jsonscan.SkipValue(b, i, 0, jsonscan.MaxDepth)
		if err != nil {
			return dst, false, err
		}
		if j := jsonscan.SkipSpace(b, end); j != len(b) {
			return dst, false, fmt.Errorf("invalid character %q after top-level value (offset %d)", rune(b[j]), j)
		}
		return dst, false, nil
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return dst, true, trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return dst, false, fmt.Errorf("expected a key (offset %d)", i)
		}
		kend, short := jsonscan.ShortString(b, i)
		escaped := false
		if !short {
			if kend, escaped, _, err = jsonscan.String(b, i); err != nil {
				return dst, false, err
			}
		}
		key := b[i+1 : kend-1]
		if escaped {
			key = jsonscan.AppendUnquote(nil, key)
		}
		i = jsonscan.SkipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return dst, false, fmt.Errorf("expected ':' after a key (offset %d)", i)
		}
		i = jsonscan.SkipSpace(b, i+1)
		if i >= len(b) {
			return dst, false, &jsonscan.SyntaxError{Offset: len(b), End: true}
		}
		vend, err := memberValue(b, i)
		if err != nil {
			return dst, false, err
		}
		dst = append(dst, member{Key: key, Value: b[i:vend]})
		i = jsonscan.SkipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return dst, true, trailing(b, i+1)
		}
		return dst, false, fmt.Errorf("expected ',' or '}' after an object member (offset %d)", i)
	}
}

// memberValue validates the value at b[i] of a top-level member: a string
// or number directly (most envelope members are), anything else through
// SkipValue.
func memberValue(b []byte, i int) (int, error) {
	switch c := b[i]; {
	case c == '"':
		if end, ok := jsonscan.ShortString(b, i); ok {
			return end, nil
		}
		end, _, _, err := jsonscan.String(b, i)
		return end, err
	case c == '-' || '0' <= c && c <= '9':
		end, _, err := jsonscan.Number(b, i)
		return end, err
	}
	return jsonscan.SkipValue(b, i, 1, jsonscan.MaxDepth)
}

func trailing(b []byte, i int) error {
	if j := jsonscan.SkipSpace(b, i); j != len(b) {
		return fmt.Errorf("invalid character %q after top-level value (offset %d)", rune(b[j]), j)
	}
	return nil
}

// number reads a raw JSON number as the float64 JavaScript holds; ok is false
// for any other value.
func number(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	// Fast path: a plain non-negative integer of up to 15 digits is exact.
	if len(raw) <= 15 && raw[0] != '-' && (raw[0] != '0' || len(raw) == 1) {
		var n int64
		plain := true
		for _, c := range raw {
			if c < '0' || c > '9' {
				plain = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if plain {
			return float64(n), true
		}
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		// Out of range: JavaScript reads it as ±Infinity, never a safe integer.
		return math.Inf(1), true
	}
	if v == 0 && raw[0] == '-' {
		v = math.Copysign(0, -1)
	}
	return v, true
}

// maxSafe is Number.MAX_SAFE_INTEGER.
const maxSafe = 1<<53 - 1

// safeInteger is Number.isSafeInteger.
func safeInteger(v float64) bool {
	return v == math.Trunc(v) && math.Abs(v) <= maxSafe
}

// nonNegativeSafe is the package's "non-negative safe integer": -0 is refused
// as dsh refuses it with Object.is(value, -0).
func nonNegativeSafe(raw []byte) (int64, bool) {
	v, ok := number(raw)
	if !ok || !safeInteger(v) || v < 0 || math.Signbit(v) {
		return 0, false
	}
	return int64(v), true
}

// str reads a raw JSON string value.
func str(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if s, ok := interned[string(body)]; ok { // no allocation: the compiler elides the conversion
		return s, true
	}
	return string(jsonscan.AppendUnquote(nil, body)), true
}

// interned holds the event types, so the type of each line costs no
// allocation.
var interned = func() map[string]string {
	m := map[string]string{}
	for t := range KnownTypes {
		m[t] = t
	}
	for _, t := range []string{TypeSteeringMessage, TagTextChunks, TagReasoningChunks, TagToolCallChunks, "session"} {
		m[t] = t
	}
	return m
}()

// last returns the value of the last member named key (JSON.parse keeps the
// last of duplicate keys).
func last(ms []member, key string) ([]byte, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if string(ms[i].Key) == key {
			return ms[i].Value, true
		}
	}
	return nil, false
}

// exactKeys is dsh's hasExactKeys: every key of want is present and no
// other. It counts ms's distinct keys in place (objects here have a handful
// of members), allocating nothing.
func exactKeys(ms []member, want ...string) bool {
	distinct := 0
	for i, m := range ms {
		seen := false
		for _, e := range ms[:i] {
			if string(e.Key) == string(m.Key) {
				seen = true
				break
			}
		}
		if !seen {
			distinct++
		}
	}
	if distinct != len(want) {
		return false
	}
	for _, w := range want {
		if _, ok := last(ms, w); !ok {
			return false
		}
	}
	return true
}

func skipSpaceAt(b []byte, i int) int { return jsonscan.SkipSpace(b, i) }

// valueEnd is the end of the already-validated value at b[i].
func valueEnd(b []byte, i int) int {
	switch c := b[i]; {
	case c == '"':
		if end, ok := jsonscan.ShortString(b, i); ok {
			return end
		}
		if end, _, _, err := jsonscan.String(b, i); err == nil {
			return end
		}
	case c == '-' || c >= '0' && c <= '9':
		if end, _, err := jsonscan.Number(b, i); err == nil {
			return end
		}
	}
	end, err := jsonscan.SkipValue(b, i, 1, jsonscan.MaxDepth)
	if err != nil {
		return len(b) // unreachable for validated input
	}
	return end
}

// Member is one key of a JSON object with its raw value.
type Member struct {
	Key   []byte // unquoted
	Value []byte // raw JSON
}

// Object splits raw JSON into its members when it is an object (ok false
// for any other value), appending to dst. raw must be valid JSON — a part of
// a line ParseLine accepted, such as Record.Data — so it is split, not
// validated again: the navigation the recovery fold reads event data with.
func Object(dst []Member, raw []byte) (ms []Member, ok bool) {
	i := skipSpace(raw)
	if i >= len(raw) || raw[i] != '{' {
		return dst, false
	}
	i = skipSpaceAt(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		kend, escaped, _, err := jsonscan.String(raw, i) // keys are short: check them
		if err != nil {
			return dst, false
		}
		key := raw[i+1 : kend-1]
		if escaped {
			key = jsonscan.AppendUnquote(nil, key)
		}
		i = skipSpaceAt(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return dst, false
		}
		i = skipSpaceAt(raw, i+1)
		vend := skipFast(raw, i)
		dst = append(dst, Member{Key: key, Value: raw[i:vend]})
		i = skipSpaceAt(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpaceAt(raw, i+1)
		}
	}
	return dst, true
}

// Array splits valid raw JSON into its elements when it is an array.
func Array(dst [][]byte, raw []byte) ([][]byte, bool) {
	i := skipSpace(raw)
	if i >= len(raw) || raw[i] != '[' {
		return dst, false
	}
	i = skipSpaceAt(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		end := skipFast(raw, i)
		dst = append(dst, raw[i:end])
		i = skipSpaceAt(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpaceAt(raw, i+1)
		}
	}
	return dst, true
}

// String reads raw JSON as a string value (ok false for any other value).
func String(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if end, _, _, err := jsonscan.String(raw, 0); err != nil || end != len(raw) {
		return "", false
	}
	return str(raw)
}

// skipFast returns the end of the valid JSON value at b[i] without
// validating it: strings by their closing quote, containers by depth.
func skipFast(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i+1)
			if i >= len(b) {
				return len(b) // unterminated: only invalid input gets here
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case ' ', '\t', '\n', '\r', ',', ':':
		default:
			if depth == 0 {
				j := i
				for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
					j++
				}
				return j
			}
		}
	}
	return len(b)
}

// stringEnd is the index of the quote closing the string whose content
// starts at b[i] (len(b) if none): the next quote not escaped by an odd run
// of backslashes, found with IndexByte rather than byte by byte.
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		k := q
		for k > i && b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q
		}
		i = q + 1
	}
}
