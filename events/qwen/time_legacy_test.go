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
