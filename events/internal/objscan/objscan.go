// Package objscan walks the members of one JSON object in place, for the
// hand-written codecs of events/codex and events/claude: a codec reads the
// few members it needs and skips the rest, validated to the JSON grammar by
// events/internal/jsonscan but never copied. A tool output of megabytes is
// scanned once and allocates nothing.
package objscan

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// ErrNotObject is returned when the value at the offset is not an object.
var ErrNotObject = errors.New("objscan: not an object")

// Member handles one member: key is its raw key (the bytes between the
// quotes; Escaped says it holds escapes), v the offset of its value. It
// returns the offset just past the value, having skipped or read it.
type Member func(key []byte, v int) (end int, err error)

// Object walks the object starting at b[i] == '{' and returns the offset
// just past it. depth is the nesting of the object itself (1 for a line's
// top-level value); a container nested deeper than maxDepth is an error.
func Object(b []byte, i, depth, maxDepth int, member Member) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, ErrNotObject
	}
	if depth > maxDepth {
		return 0, &jsonscan.SyntaxError{Offset: i, Char: b[i], Context: "exceeded max depth"}
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, syntax(b, i, "looking for beginning of object key string")
		}
		// Most keys are short and plain: ShortString (inlined) reads them
		// without a call.
		end, ok := jsonscan.ShortString(b, i)
		var key []byte
		if ok {
			key = b[i+1 : end-1]
		} else {
			var escaped bool
			var err error
			if end, escaped, _, err = jsonscan.String(b, i); err != nil {
				return 0, err
			}
			key = b[i+1 : end-1]
			if escaped {
				key = jsonscan.AppendUnquote(nil, key)
			}
		}
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, syntax(b, i, "after object key")
		}
		i = jsonscan.SkipSpace(b, i+1)
		if i >= len(b) {
			// Members may index b[v]: a value is always there when called.
			return 0, syntax(b, i, "")
		}
		var err error
		if i, err = member(key, i); err != nil {
			return 0, err
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return 0, syntax(b, i, "")
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntax(b, i, "after object key:value pair")
		}
	}
}

// Array walks the array starting at b[i] == '[' and calls elem for each
// element's offset; elem returns the offset just past the element.
func Array(b []byte, i, depth, maxDepth int, elem func(v int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return 0, errors.New("objscan: not an array")
	}
	if depth > maxDepth {
		return 0, &jsonscan.SyntaxError{Offset: i, Char: b[i], Context: "exceeded max depth"}
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return 0, syntax(b, i, "")
		}
		var err error
		if i, err = elem(i); err != nil {
			return 0, err
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return 0, syntax(b, i, "")
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntax(b, i, "after array element")
		}
	}
}

// Skip validates and skips the value at b[v], nested depth containers deep.
func Skip(b []byte, v, depth, maxDepth int) (int, error) {
	return jsonscan.SkipValue(b, v, depth, maxDepth)
}

// String reads the string value at b[v]. ok is false (and end is past the
// value) when the value is valid JSON of another type.
func String(b []byte, v, depth, maxDepth int) (s string, ok bool, end int, err error) {
	if v < len(b) && b[v] == '"' {
		end, escaped, nonASCII, err := jsonscan.String(b, v)
		if err != nil {
			return "", false, 0, err
		}
		raw := b[v+1 : end-1]
		if escaped || nonASCII && !utf8.Valid(raw) {
			return string(jsonscan.AppendUnquote(nil, raw)), true, end, nil
		}
		return string(raw), true, end, nil
	}
	end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
	return "", false, end, err
}

// Int reads an integer value at b[v]; ok is false for any other value
// (including null and non-integral numbers) or an integer out of int64.
func Int(b []byte, v, depth, maxDepth int) (n int64, ok bool, end int, err error) {
	end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
	if err != nil {
		return 0, false, 0, err
	}
	lit := b[v:end]
	if len(lit) == 0 {
		return 0, false, end, nil
	}
	if len(lit) > 18 {
		n, perr := strconv.ParseInt(string(lit), 10, 64)
		return n, perr == nil, end, nil
	}
	i := 0
	neg := lit[0] == '-'
	if neg {
		i = 1
	}
	if i == len(lit) {
		return 0, false, end, nil
	}
	for ; i < len(lit); i++ {
		c := lit[i]
		if c < '0' || c > '9' {
			return 0, false, end, nil
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true, end, nil
}

// IsNull reports whether the value at b[v] is the literal null.
func IsNull(b []byte, v int) bool {
	return len(b)-v >= 4 && b[v] == 'n' && b[v+1] == 'u' && b[v+2] == 'l' && b[v+3] == 'l'
}

// Bool reads true or false at b[v] (ok false for any other value).
func Bool(b []byte, v, depth, maxDepth int) (val, ok bool, end int, err error) {
	end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
	if err != nil {
		return false, false, 0, err
	}
	switch string(b[v:end]) {
	case "true":
		return true, true, end, nil
	case "false":
		return false, true, end, nil
	}
	return false, false, end, nil
}

func syntax(b []byte, i int, context string) error {
	if i >= len(b) {
		return &jsonscan.SyntaxError{Offset: len(b), End: true}
	}
	return &jsonscan.SyntaxError{Offset: i, Char: b[i], Context: context}
}
