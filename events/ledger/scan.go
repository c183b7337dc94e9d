package ledger

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
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

// span locates a value in the line: line[start:end]. end == 0 means the key
// was absent (a value never ends at offset 0: '{' comes first). plain marks a
// string whose content is ASCII without escapes, so its bytes are its value.
type span struct {
	start, end int
	plain      bool
}

type fields [nFields]span

// syntaxErr describes what encoding/json would reject at b[i], in its words
// (the offset is extra).
func syntaxErr(b []byte, i int, context string) error {
	if i >= len(b) {
		return fmt.Errorf("ledger: %w: not a JSON object: unexpected end of JSON input", ErrMalformed)
	}
	return fmt.Errorf("ledger: %w: not a JSON object: invalid character %q %s (offset %d)",
		ErrMalformed, rune(b[i]), context, i)
}

// scanErr words a jsonscan error as syntaxErr does.
func scanErr(b []byte, err error) error {
	if se, ok := err.(*jsonscan.SyntaxError); ok {
		return syntaxErr(b, se.Offset, se.Context)
	}
	return fmt.Errorf("ledger: %w: not a JSON object: %w", ErrMalformed, err)
}

// scanObject validates line as exactly one JSON object surrounded by optional
// whitespace and records in f the span of the last value of each known key
// (the last duplicate wins, as it does in a map).
func scanObject(line []byte, f *fields) error {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) {
		return syntaxErr(line, i, "")
	}
	if line[i] != '{' {
		return fmt.Errorf("ledger: %w: not a JSON object: value begins with %q", ErrMalformed, rune(line[i]))
	}
	i = jsonscan.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return syntaxErr(line, i, "looking for beginning of object key string")
			}
			ks := i
			// jsonscan is called directly, not through a ledger wrapper:
			// the extra frame per token cost a tenth of Decode.
			var escaped, nonASCII bool
			var err error
			if i, escaped, nonASCII, err = jsonscan.String(line, i); err != nil {
				return scanErr(line, err)
			}
			slot := keySlot(line[ks+1:i-1], !escaped && !nonASCII)
			i = jsonscan.SkipSpace(line, i)
			if i >= len(line) || line[i] != ':' {
				return syntaxErr(line, i, "after object key")
			}
			i = jsonscan.SkipSpace(line, i+1)
			vs := i
			// Strings and numbers are nearly every value; dispatch them here.
			if i >= len(line) {
				return syntaxErr(line, i, "")
			}
			switch c := line[i]; {
			case c == '"':
				i, escaped, nonASCII, err = jsonscan.String(line, i)
			case c == '-' || ('0' <= c && c <= '9'):
				escaped = true // not a string: never plain
				i, _, err = jsonscan.Number(line, i)
			default:
				escaped = true
				i, err = jsonscan.SkipValue(line, i, 1, jsonscan.MaxDepth)
			}
			if err != nil {
				return scanErr(line, err)
			}
			if slot >= 0 {
				f[slot] = span{vs, i, !escaped && !nonASCII}
			}
			i = jsonscan.SkipSpace(line, i)
			if i >= len(line) {
				return syntaxErr(line, i, "")
			}
			if line[i] == ',' {
				i = jsonscan.SkipSpace(line, i+1)
				continue
			}
			if line[i] == '}' {
				i++
				break
			}
			return syntaxErr(line, i, "after object key:value pair")
		}
	}
	if i = jsonscan.SkipSpace(line, i); i < len(line) {
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
		raw = jsonscan.AppendUnquote(buf[:0], raw)
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
	return string(jsonscan.AppendUnquote(buf[:0], raw)) == want
}

// appendString appends field k's decoded string value.
func (f *fields) appendString(dst, line []byte, k int) []byte {
	if f[k].plain {
		return append(dst, f.content(line, k)...)
	}
	return jsonscan.AppendUnquote(dst, f.content(line, k))
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
