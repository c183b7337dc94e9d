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

// FuzzCanonicalTime: the fixed-offset reader of toISOString's form agrees
// with the general ISO reader wherever it answers.
func FuzzCanonicalTime(f *testing.F) {
	for _, s := range []string{"2026-01-01T00:01:00.000Z", "2026-02-30T23:59:59.999Z", "0000-01-01T00:00:00.000Z",
		"9999-12-31T24:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-01-01T00:60:00.000Z", "2026-01-01t00:00:00.000z"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := canonicalTime(b)
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
