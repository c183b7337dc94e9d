package objscan

import (
	"bytes"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// LongMin is the shortest string Longs records: shorter ones are left to
// the gap search, where they cost about what recording them would.
const LongMin = 64

// Longs records where the long strings of a line lie as a codec skips
// them, so that a check of the line's other bytes (no '\n' in a line
// parsed where it lies in a buffer; valid UTF-8) need not read them again:
// a JSON string cannot hold a raw newline, and most of a line's bytes are
// in its long strings (tool outputs). The first len(spans) are recorded;
// any after them are simply left in the gaps.
type Longs struct {
	spans [8]Span
	n     int
}

// Reset forgets the strings of the previous line.
func (l *Longs) Reset() { l.n = 0 }

// Add records the string b[start:end] (quotes included).
func (l *Longs) Add(start, end int) {
	if end-start >= LongMin && l.n < len(l.spans) {
		l.spans[l.n] = Span{start, end}
		l.n++
	}
}

// Skip is objscan.Skip, recording the long strings it passes, in
// containers too. On an error the value is skipped again by Skip, so the
// error is Skip's, in its words.
func (l *Longs) Skip(b []byte, v, depth, maxDepth int) (int, error) {
	end, err := l.skip(b, v, depth, maxDepth)
	if err != nil {
		return Skip(b, v, depth, maxDepth)
	}
	return end, nil
}

func (l *Longs) skip(b []byte, v, depth, maxDepth int) (int, error) {
	switch b[v] {
	case '"':
		end, _, _, err := jsonscan.String(b, v)
		if err == nil {
			l.Add(v, end)
		}
		return end, err
	case '{':
		return Object(b, v, depth+1, maxDepth, func(_ []byte, e int) (int, error) {
			return l.skip(b, e, depth+1, maxDepth)
		})
	case '[':
		return Array(b, v, depth+1, maxDepth, func(e int) (int, error) {
			return l.skip(b, e, depth+1, maxDepth)
		})
	}
	return Skip(b, v, depth, maxDepth)
}

// Gaps calls ok on each run of b outside the recorded strings, in order,
// and reports whether every call returned true. The strings must lie in b
// in the order they were recorded (as a left-to-right parse records them).
func (l *Longs) Gaps(b []byte, ok func(gap []byte) bool) bool {
	prev := 0
	for _, s := range l.spans[:l.n] {
		if s.Start < prev || s.End > len(b) {
			return ok(b) // not as recorded: every byte
		}
		if !ok(b[prev:s.Start]) {
			return false
		}
		prev = s.End
	}
	return ok(b[prev:])
}

// NoNewline is a Gaps check: b holds no '\n' outside the recorded strings
// (which, being JSON strings, hold none).
func NoNewline(gap []byte) bool { return bytes.IndexByte(gap, '\n') < 0 }
