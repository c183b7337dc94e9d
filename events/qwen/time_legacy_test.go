package qwen

import "testing"

// V8's legacy Date.parse fallback accepts these; Reference-mode conformance
// with Qwen Code found transcripts carrying them (known mismatch K3).
func TestParseTimeLegacyForms(t *testing.T) {
	const want = int64(1767225660000) // 2026-01-01T00:01:00Z
	for _, s := range []string{
		"2026-01-01T00:01:00.000Z",
		"2026-01-01 00:01:00Z",
		"2026-01-01 00:01:00+00:00",
		"2026-01-01 02:01:00+02:00",
		"2026-01-01 00:01:00",
		"2026-01-01 00:01",
		"Thu, 01 Jan 2026 00:01:00 GMT",
		"Thu, 01 Jan 2026 01:01:00 +0100",
	} {
		got, ok := ParseTime(s)
		if !ok || got != want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "yesterday", "2026-01-01 00:01:00 XYZ", "Thu, 01 Jan 2026 00:01:00 XYZ", "2026-13-01 00:00:00Z"} {
		if ms, ok := ParseTime(s); ok {
			t.Errorf("ParseTime(%q) = %d, want invalid", s, ms)
		}
	}
}

// FuzzCanonicalTime: the fixed-offset reader of toISOString's form answers
// as its specification, and agrees with the general ISO reader wherever it
// answers.
func FuzzCanonicalTime(f *testing.F) {
	for _, s := range []string{"2026-01-01T00:01:00.000Z", "2026-02-30T23:59:59.999Z", "0000-01-01T00:00:00.000Z",
		"9999-12-31T24:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-01-01T00:60:00.000Z", "2026-01-01t00:00:00.000z"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := canonicalTime(b)
		if sg, sok := canonicalTimeSpec(b); sg != got || sok != ok {
			t.Fatalf("canonicalTime(%q) = %d, %v; spec %d, %v", b, got, ok, sg, sok)
		}
		if !ok {
			return
		}
		want, wok := parseISO(b)
		if !wok || got != want {
			t.Fatalf("canonicalTime(%q) = %d, parseISO = %d, %v", b, got, want, wok)
		}
	})
}

// The fast path reads what Qwen writes.
func TestCanonicalTimeReadsToISOString(t *testing.T) {
	for _, s := range []string{"2026-01-01T00:01:00.000Z", "1969-12-31T23:59:59.999Z", "2026-02-30T12:00:00.500Z"} {
		got, ok := canonicalTime([]byte(s))
		want, wok := parseISO(s)
		if !ok || !wok || got != want {
			t.Errorf("canonicalTime(%q) = %d, %v; parseISO = %d, %v", s, got, ok, want, wok)
		}
	}
}

// canonicalTimeSpec is canonicalTime byte by byte: its specification.
func canonicalTimeSpec(b []byte) (int64, bool) {
	if len(b) != 24 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' ||
		b[16] != ':' || b[19] != '.' || b[23] != 'Z' {
		return 0, false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22} {
		if b[i] < '0' || b[i] > '9' {
			return 0, false
		}
	}
	d2 := func(i int) int { return int(b[i]-'0')*10 + int(b[i+1]-'0') }
	year := d2(0)*100 + d2(2)
	month, day, hour, minute, sec := d2(5), d2(8), d2(11), d2(14), d2(17)
	ms := d2(20)*10 + int(b[22]-'0')
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	return (daysFromCivil(year, month, 1)+int64(day-1))*86400000 +
		int64(hour)*3600000 + int64(minute)*60000 + int64(sec)*1000 + int64(ms), true
}

// The word-at-a-time reader answers as its byte-by-byte specification for
// every byte value at every position of canonical stamps (so a separator,
// digit or range check it skipped fails here), and for every length
// around 24.
func TestCanonicalTimeEveryByte(t *testing.T) {
	for _, s := range []string{"2026-01-01T00:01:00.000Z", "1969-12-31T23:59:59.999Z", "2026-02-30T12:00:00.500Z",
		"0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2000-02-29T09:09:09.090Z"} {
		for i := range len(s) {
			for c := range 256 {
				b := []byte(s)
				b[i] = byte(c)
				got, ok := canonicalTime(b)
				want, wok := canonicalTimeSpec(b)
				if got != want || ok != wok {
					t.Fatalf("canonicalTime(%q) = %d, %v; spec %d, %v", b, got, ok, want, wok)
				}
			}
		}
		for n := range len(s) + 8 {
			b := []byte((s + "00000000")[:n])
			if _, ok := canonicalTime(b); ok != (n == 24) {
				t.Fatalf("canonicalTime(%q): ok %v", b, ok)
			}
		}
	}
}
