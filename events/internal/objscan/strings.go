package objscan

import (
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
}

type pending struct {
	dst        *string
	start, end int
}

// Reset empties s for the next record, keeping its buffers.
func (s *Strings) Reset() {
	s.buf = s.buf[:0]
	s.dsts = s.dsts[:0]
}

// Add reads the value at b[v]; when it is a string its value is queued for
// dst, and ok is true. end is past the value, whatever its type.
func (s *Strings) Add(dst *string, b []byte, v, depth, maxDepth int) (ok bool, end int, err error) {
	if v >= len(b) || b[v] != '"' {
		end, err = jsonscan.SkipValue(b, v, depth, maxDepth)
		return false, end, err
	}
	end, escaped, nonASCII, err := jsonscan.String(b, v)
	if err != nil {
		return false, 0, err
	}
	raw := b[v+1 : end-1]
	start := len(s.buf)
	if escaped || nonASCII && !utf8.Valid(raw) {
		s.buf = jsonscan.AppendUnquote(s.buf, raw)
	} else {
		s.buf = append(s.buf, raw...)
	}
	s.dsts = append(s.dsts, pending{dst, start, len(s.buf)})
	return true, end, nil
}

// Finish assigns every queued string.
func (s *Strings) Finish() {
	if len(s.dsts) == 0 {
		return
	}
	all := string(s.buf)
	for _, p := range s.dsts {
		*p.dst = all[p.start:p.end]
	}
}

// Timestamp parses an ISO 8601 instant as the writers here emit it,
// "2026-11-30T09:00:01.123Z" taking a fast path, anything else through
// time.Parse (RFC 3339). ok is false when it is not a valid instant.
func Timestamp(s string) (ms int64, ok bool) {
	if len(s) == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == '.' && s[23] == 'Z' {
		n := func(i, w int) int {
			v := 0
			for k := i; k < i+w; k++ {
				c := s[k]
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, d, h, mi, se, frac := n(0, 4), n(5, 2), n(8, 2), n(11, 2), n(14, 2), n(17, 2), n(20, 3)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && se >= 0 && se < 60 && frac >= 0 {
			if d > daysIn(y, mo) {
				return 0, false // Feb 30 and the like, as time.Parse refuses them
			}
			days := daysFromCivil(y, mo, d)
			return ((days*24+int64(h))*60+int64(mi))*60000 + int64(se)*1000 + int64(frac), true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
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
