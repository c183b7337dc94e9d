package qwen

import (
	"encoding/binary"
	"time"
)

// ParseTime parses a record timestamp to Unix milliseconds the way V8's
// Date parser reads the ECMAScript date-time string format, which is what
// Qwen writes (Date.prototype.toISOString) and what validateTranscriptRecord
// accepts (`Number.isFinite(new Date(ts).getTime())`):
//
//	YYYY | YYYY-MM | YYYY-MM-DD, or ±YYYYYY in place of YYYY,
//	optionally followed by THH:mm, THH:mm:ss or THH:mm:ss.fraction,
//	then Z, ±HH:mm, ±HHmm or nothing.
//
// As in V8: a day of 1–31 is accepted for every month and rolls over
// (2026-02-30 is March 2), 24:00:00.000 is midnight of the next day, the
// fraction may have any number of digits (the first three count), and
// "-000000" is invalid. A date-time without an offset is local time in
// JavaScript; the core has no time zone, so it is read as UTC here (Qwen never
// writes that form). V8's legacy fallback formats ("Jan 1 2026", "2026/01/01")
// are not accepted — they are reported as invalid, a documented deviation.
func ParseTime(s string) (int64, bool) {
	if ms, ok := parseISO(s); ok {
		return ms, true
	}
	return parseLegacy(s)
}

// parseTimeBytes is ParseTime of string(b), without the string for the
// ISO form every writer uses.
func parseTimeBytes(b []byte) (int64, bool) {
	if ms, ok := canonicalTime(b); ok {
		return ms, true
	}
	if ms, ok := parseISO(b); ok {
		return ms, true
	}
	return parseLegacy(string(b))
}

// canonicalTime reads the one form Qwen writes (toISOString:
// YYYY-MM-DDTHH:mm:ss.sssZ) with fixed offsets; every record has a
// timestamp and both passes parse it. Anything else, including a field out
// of range or hour 24, is left to parseISO (ok false).
//
// It reads the 24 bytes as three words: one compare per word checks the
// separators, one carry test per word the 17 digits (a byte-by-byte check
// of each cost ~430 instructions a record, 6.5% of the Go source tree's
// profile; ADR 0042's amendment of 2026-12-02).
func canonicalTime(b []byte) (int64, bool) {
	if len(b) != 24 {
		return 0, false
	}
	w0 := binary.LittleEndian.Uint64(b[0:8])   // YYYY-MM-
	w1 := binary.LittleEndian.Uint64(b[8:16])  // DDTHH:mm
	w2 := binary.LittleEndian.Uint64(b[16:24]) // :ss.sssZ
	if w0&tsSep0 != tsSepVal0 || w1&tsSep1 != tsSepVal1 || w2&tsSep2 != tsSepVal2 {
		return 0, false
	}
	// The digits less '0', the separators' bytes set to 0 (a valid digit).
	d0, d1, d2 := (w0&^tsSep0)|(tsSep0&(lsb*'0')), (w1&^tsSep1)|(tsSep1&(lsb*'0')), (w2&^tsSep2)|(tsSep2&(lsb*'0'))
	if !allDigits(d0) || !allDigits(d1) || !allDigits(d2) {
		return 0, false
	}
	d0, d1, d2 = d0-lsb*'0', d1-lsb*'0', d2-lsb*'0'
	at := func(w uint64, i uint) int { return int(w >> (8 * i) & 0xff) }
	year := at(d0, 0)*1000 + at(d0, 1)*100 + at(d0, 2)*10 + at(d0, 3)
	month := at(d0, 5)*10 + at(d0, 6)
	day := at(d1, 0)*10 + at(d1, 1)
	hour := at(d1, 3)*10 + at(d1, 4)
	minute := at(d1, 6)*10 + at(d1, 7)
	sec := at(d2, 1)*10 + at(d2, 2)
	ms := at(d2, 4)*100 + at(d2, 5)*10 + at(d2, 6)
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	// A four-digit year is always within TimeClip's range.
	return (daysFromCivil(year, month, 1)+int64(day-1))*86400000 +
		int64(hour)*3600000 + int64(minute)*60000 + int64(sec)*1000 + int64(ms), true
}

// The separators of YYYY-MM-DDTHH:mm:ss.sssZ by word (little endian: the
// first byte is the lowest): the mask of their bytes and their values.
const (
	tsSep0, tsSepVal0 = 0xff<<32 | 0xff<<56, '-'<<32 | '-'<<56
	tsSep1, tsSepVal1 = 0xff<<16 | 0xff<<40, 'T'<<16 | ':'<<40
	tsSep2, tsSepVal2 = 0xff | 0xff<<24 | 0xff<<56, ':' | '.'<<24 | 'Z'<<56
)

// allDigits reports whether every byte of w is an ASCII digit. The lowest
// byte that is not one sets its own high bit in one of the two sums (no
// carry or borrow reaches it from the digits below it), so a word of
// digits is exactly one whose sums set none.
func allDigits(w uint64) bool {
	return ((w+lsb*0x46)|(w-lsb*'0'))&msb == 0
}

func parseISO[S string | []byte](s S) (int64, bool) {
	i := 0
	num := func(n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for j := 0; j < n; j++ {
			c := s[i+j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		i += n
		return v, true
	}
	var year int
	var ok bool
	switch {
	case len(s) > 0 && (s[0] == '+' || s[0] == '-'):
		neg := s[0] == '-'
		i = 1
		if year, ok = num(6); !ok {
			return 0, false
		}
		if neg {
			if year == 0 {
				return 0, false
			}
			year = -year
		}
	default:
		if year, ok = num(4); !ok {
			return 0, false
		}
	}
	month, day := 1, 1
	if i < len(s) && s[i] == '-' {
		i++
		if month, ok = num(2); !ok || month < 1 || month > 12 {
			return 0, false
		}
		if i < len(s) && s[i] == '-' {
			i++
			if day, ok = num(2); !ok || day < 1 || day > 31 {
				return 0, false
			}
		}
	}
	var hour, minute, sec, ms int
	if i < len(s) && (s[i] == 'T' || s[i] == 't') {
		i++
		if hour, ok = num(2); !ok || i >= len(s) || s[i] != ':' {
			return 0, false
		}
		i++
		if minute, ok = num(2); !ok {
			return 0, false
		}
		if i < len(s) && s[i] == ':' {
			i++
			if sec, ok = num(2); !ok {
				return 0, false
			}
			if i < len(s) && s[i] == '.' {
				i++
				digits := 0
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					if digits < 3 {
						ms = ms*10 + int(s[i]-'0')
					}
					digits++
					i++
				}
				if digits == 0 {
					return 0, false
				}
				for ; digits < 3; digits++ {
					ms *= 10
				}
			}
		}
		if minute > 59 || sec > 59 || hour > 24 || hour == 24 && (minute != 0 || sec != 0 || ms != 0) {
			return 0, false
		}
		offset := 0
		if i < len(s) {
			switch s[i] {
			case 'Z', 'z':
				i++
			case '+', '-':
				sign := 1
				if s[i] == '-' {
					sign = -1
				}
				i++
				oh, ok := num(2)
				if !ok {
					return 0, false
				}
				if i < len(s) && s[i] == ':' {
					i++
				}
				om, ok := num(2)
				if !ok || oh > 23 || om > 59 {
					return 0, false
				}
				offset = sign * (oh*60 + om)
			}
		}
		if i != len(s) {
			return 0, false
		}
		t := (daysFromCivil(year, month, 1)+int64(day-1))*86400000 +
			int64(hour)*3600000 + int64(minute)*60000 + int64(sec)*1000 + int64(ms) - int64(offset)*60000
		return t, inRange(t)
	}
	if i != len(s) {
		return 0, false
	}
	t := (daysFromCivil(year, month, 1) + int64(day-1)) * 86400000
	return t, inRange(t)
}

// inRange is ECMAScript TimeClip: |t| ≤ 8.64e15 ms.
func inRange(t int64) bool { return t >= -8.64e15 && t <= 8.64e15 }

// daysFromCivil counts days from 1970-01-01 to y-m-d (proleptic Gregorian).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// legacyLayouts are the forms of V8's legacy Date.parse fallback that hand
// edited or foreign-written transcripts actually carry: an ISO date and time
// separated by a space instead of "T", and RFC 1123 (Date.prototype.toUTCString).
// A form without a zone is read as UTC, as for the ISO date-time above.
var legacyLayouts = []string{
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	time.RFC1123,
	time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 MST",
}

func parseLegacy(s string) (int64, bool) {
	for _, layout := range legacyLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if name, off := t.Zone(); off == 0 && name != "" && name != "UTC" && name != "GMT" && name != "Z" {
			continue // an unknown zone abbreviation: V8 rejects it, Go would invent offset 0
		}
		return t.UnixMilli(), true
	}
	return 0, false
}
