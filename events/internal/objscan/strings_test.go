package objscan

import (
	"testing"
	"time"
)

// FuzzTimestamp: the fast path agrees with time.Parse on every input
// (go test -run='^$' -fuzz=FuzzTimestamp ./events/internal/objscan).
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{"2026-11-30T09:00:01.123Z", "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z",
		"0000-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2026-13-01T00:00:00.000Z", "2026-11-30T09:00:01Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, ok := Timestamp(s)
		tm, err := time.Parse(time.RFC3339Nano, s)
		if ok != (err == nil) || ok && ms != tm.UnixMilli() {
			t.Fatalf("%q: fast %d %v, time.Parse %v %v", s, ms, ok, tm.UnixMilli(), err)
		}
	})
}
