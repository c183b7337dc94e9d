package objscan

import (
	"strings"
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

func knownAB(raw []byte) string {
	switch string(raw) {
	case "a":
		return "a"
	case "b":
		return "b"
	}
	return ""
}

// TestAddKnown: a known value is the constant, any other is copied, and of
// duplicate members the last wins whichever kind each is; Span reads a
// value into the same buffer; Known refuses escaped and unknown strings.
func TestAddKnown(t *testing.T) {
	b := []byte(`"a" "x\u0079" "b" 7 "a\n"`)
	var s Strings
	var d1, d2, d3, d4 string
	s.Reset()
	for _, c := range []struct {
		dst *string
		v   int
		ok  bool
	}{{&d1, 0, true}, {&d1, 4, true}, {&d2, 4, true}, {&d2, 14, true}, {&d3, 18, false}, {&d4, 20, true}} {
		ok, _, err := s.AddKnown(c.dst, b, c.v, 1, 8, knownAB)
		if err != nil || ok != c.ok {
			t.Fatalf("AddKnown at %d: %v %v", c.v, ok, err)
		}
	}
	sp, ok, end, err := s.Span(b, 4, 1, 8)
	if !ok || err != nil || end != 13 {
		t.Fatal(sp, ok, end, err)
	}
	s.Finish()
	if d1 != "xy" || d2 != "b" || d3 != "" || d4 != "a\n" || s.At(sp) != "xy" {
		t.Fatalf("%q %q %q %q %q", d1, d2, d3, d4, s.At(sp))
	}
	for _, c := range []struct {
		v    int
		want string
	}{{0, "a"}, {4, ""}, {14, "b"}, {18, ""}, {20, ""}} {
		if k, _, ok := Known(b, c.v, knownAB); k != c.want || ok != (c.want != "") {
			t.Errorf("Known at %d = %q %v", c.v, k, ok)
		}
	}
}

// TestReplace: with Replace, a later value that is not a string empties
// its destination, and a string after it is the value; without, the
// earlier string survives.
func TestReplace(t *testing.T) {
	b := []byte(`"first" null "second"`)
	for _, replace := range []bool{true, false} {
		s := Strings{Replace: replace}
		var d1, d2 string
		_, _, _ = s.Add(&d1, b, 0, 1, 128)
		_, _, _ = s.Add(&d1, b, 8, 1, 128)
		_, _, _ = s.Add(&d2, b, 8, 1, 128)
		_, _, _ = s.Add(&d2, b, 13, 1, 128)
		s.Finish()
		if want := map[bool]string{true: "", false: "first"}[replace]; d1 != want || d2 != "second" {
			t.Fatalf("replace %v: %q %q", replace, d1, d2)
		}
	}
}

// TestChunked: a Chunked Strings' values are the same strings, later
// records' appends leave earlier records' strings as they were, a long
// value gets its own allocation, and a short one none.
func TestChunked(t *testing.T) {
	var s Strings
	s.Chunked = true
	var got, want []string
	for i := 0; i < 500; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), i%40)
		if i%97 == 0 {
			v = strings.Repeat("x", ChunkSize/2)
		}
		b := []byte(`"` + v + `"`)
		s.Reset()
		var d string
		_, _, _ = s.Add(&d, b, 0, 1, 128)
		s.Finish()
		got, want = append(got, d), append(want, v)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = s.Copy([]byte("abc")) }); n > 0.1 {
		t.Fatalf("Copy of a short value: %v allocations", n)
	}
}
