package objscan

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// Strings gathers the string members a codec keeps from one record into a
// single allocation: each Add copies the (unescaped) bytes into one buffer
// and remembers where they go; Finish converts the buffer to one string
// and points every destination at its substring. A record's strings then
// live and die together and never pin the line.
type Strings struct {
	buf  []byte
	dsts []pending
	all  string // the buffer as a string, once finished
	// Chunked makes Finish and Copy take their strings from a chunk
	// shared with the records before and after (ChunkSize bytes, one
	// allocation for many records instead of one each): a kept string
	// then keeps its chunk, at most ChunkSize bytes, alive. A value longer
	// than a quarter chunk gets an allocation of its own.
	Chunked bool
	chunk   *strings.Builder
	// Replace makes a value that is not a string clear its destination,
	// as a map built from the object first would keep only the last of
	// duplicate members: without it the earlier string survives a later
	// null.
	Replace bool
}

// ChunkSize is the size of a Chunked Strings' shared chunks.
const ChunkSize = 4096

type pending struct {
	dst        *string
	known      string // the value when it is a known constant, else buf[start:end]
	start, end int
}

// Reset empties s for the next record, keeping its buffers.
func (s *Strings) Reset() {
	s.buf = s.buf[:0]
	s.dsts = s.dsts[:0]
	s.all = ""
}

// Add reads the value at b[v]; when it is a string its value is queued for
// dst, and ok is true. end is past the value, whatever its type.
func (s *Strings) Add(dst *string, b []byte, v, depth, maxDepth int) (ok bool, end int, err error) {
	return s.AddKnown(dst, b, v, depth, maxDepth, nil)
}

// AddKnown is Add for a member whose values are mostly a small vocabulary
// (a record type, a role): when known returns a non-empty string for the
// value's raw bytes (a string without escapes), that constant is the
// value, assigned by Finish, and nothing is copied; known may be nil.
func (s *Strings) AddKnown(dst *string, b []byte, v, depth, maxDepth int, known func(raw []byte) string) (ok bool, end int, err error) {
	if v >= len(b) || b[v] != '"' {
		end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
		if s.Replace && err == nil {
			s.dsts = append(s.dsts, pending{dst: dst}) // the empty string
		}
		return false, end, err
	}
	end, escaped, nonASCII, err := jsonscan.String(b, v)
	if err != nil {
		return false, 0, err
	}
	raw := b[v+1 : end-1]
	if known != nil && !escaped {
		if k := known(raw); k != "" {
			// Queued like any value, so that the last of duplicate
			// members wins as it does for the others.
			s.dsts = append(s.dsts, pending{dst: dst, known: k})
			return true, end, nil
		}
	}
	start := s.copyRaw(raw, escaped, nonASCII)
	s.dsts = append(s.dsts, pending{dst: dst, start: start, end: len(s.buf)})
	return true, end, nil
}

// copyRaw appends a string's value to the buffer and returns where it starts.
func (s *Strings) copyRaw(raw []byte, escaped, nonASCII bool) int {
	start := len(s.buf)
	if escaped || nonASCII && !utf8.Valid(raw) {
		s.buf = jsonscan.AppendUnquote(s.buf, raw)
	} else {
		s.buf = append(s.buf, raw...)
	}
	return start
}

// Span is Add for a string whose destination is not known yet (a field of
// an element still to be appended): its value is copied and its place in
// the buffer returned, to be read with At after Finish.
func (s *Strings) Span(b []byte, v, depth, maxDepth int) (sp Span, ok bool, end int, err error) {
	if v >= len(b) || b[v] != '"' {
		end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
		return Span{}, false, end, err
	}
	end, escaped, nonASCII, err := jsonscan.String(b, v)
	if err != nil {
		return Span{}, false, 0, err
	}
	start := s.copyRaw(b[v+1:end-1], escaped, nonASCII)
	return Span{start, len(s.buf)}, true, end, nil
}

// Span is a string's place in a Strings buffer.
type Span struct{ Start, End int }

// At is the string at sp, after Finish.
func (s *Strings) At(sp Span) string { return s.all[sp.Start:sp.End] }

// Copy is string(b), from the shared chunk when s is Chunked.
//
// A strings.Builder's bytes are never written again once written (it only
// appends, and grows into a new array), so the strings String returns stay
// valid and unchanged while later records append to the same chunk.
func (s *Strings) Copy(b []byte) string {
	if !s.Chunked || len(b) == 0 || len(b) > ChunkSize/4 {
		return string(b) // no allocation when empty
	}
	if s.chunk == nil || s.chunk.Cap()-s.chunk.Len() < len(b) {
		s.chunk = new(strings.Builder)
		s.chunk.Grow(ChunkSize)
	}
	start := s.chunk.Len()
	s.chunk.Write(b)
	return s.chunk.String()[start:]
}

// Finish assigns every queued string.
func (s *Strings) Finish() {
	s.all = s.Copy(s.buf)
	for _, p := range s.dsts {
		if p.known != "" {
			*p.dst = p.known
		} else {
			*p.dst = s.all[p.start:p.end]
		}
	}
}

// AppendString appends the value of the string at b[v] to dst (unescaped,
// invalid UTF-8 replaced as String does). ok is false, and dst unchanged,
// when the value is valid JSON of another type; end is past the value.
func AppendString(dst, b []byte, v, depth, maxDepth int) (out []byte, ok bool, end int, err error) {
	if v >= len(b) || b[v] != '"' {
		end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
		return dst, false, end, err
	}
	end, escaped, nonASCII, err := jsonscan.String(b, v)
	if err != nil {
		return dst, false, 0, err
	}
	raw := b[v+1 : end-1]
	if escaped || nonASCII && !utf8.Valid(raw) {
		return jsonscan.AppendUnquote(dst, raw), true, end, nil
	}
	return append(dst, raw...), true, end, nil
}

// Timestamp parses an ISO 8601 instant as the writers here emit it,
// "2026-11-30T09:00:01.123Z" taking a fast path, anything else through
// time.Parse (RFC 3339). ok is false when it is not a valid instant.
func Timestamp(s string) (ms int64, ok bool) {
	if len(s) == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == '.' && s[23] == 'Z' {
		y1, y2, mo, d, h, mi, se := digits2(s, 0), digits2(s, 2), digits2(s, 5), digits2(s, 8), digits2(s, 11), digits2(s, 14), digits2(s, 17)
		f1, f2 := digits2(s, 20), int(s[22])-'0'
		if y1|y2|mo|d|h|mi|se|f1 >= 0 && uint(f2) <= 9 && mo >= 1 && mo <= 12 && d >= 1 && h < 24 && mi < 60 && se < 60 {
			y := y1*100 + y2
			if d > daysIn(y, mo) {
				return 0, false // Feb 30 and the like, as time.Parse refuses them
			}
			days := daysFromCivil(y, mo, d)
			return ((days*24+int64(h))*60+int64(mi))*60000 + int64(se)*1000 + int64(f1*10+f2), true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// digits2 is the two decimal digits at s[i:i+2] as a number, or -1 (small
// enough to inline: the fast path must cost tens of instructions, not a
// call per field).
func digits2(s string, i int) int {
	a, b := int(s[i])-'0', int(s[i+1])-'0'
	if uint(a) > 9 || uint(b) > 9 {
		return -1
	}
	return a*10 + b
}

// Shorten cuts s to at most n bytes on a UTF-8 boundary, marking the cut
// with "…": for the one-line Describe forms, which must stay short and
// valid whatever a record holds.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (H. Hinnant's days_from_civil), in integer
// arithmetic: the fast path must not cost a time.Date per record.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// Known reads the string at b[v] when known names its raw bytes (a string
// without escapes): its constant and the offset past it. ok is false for
// any other value, which the caller then reads as it would have.
func Known(b []byte, v int, known func(raw []byte) string) (k string, end int, ok bool) {
	if v >= len(b) || b[v] != '"' {
		return "", 0, false
	}
	end, escaped, _, err := jsonscan.String(b, v)
	if err != nil || escaped {
		return "", 0, false
	}
	if k = known(b[v+1 : end-1]); k == "" {
		return "", 0, false
	}
	return k, end, true
}
