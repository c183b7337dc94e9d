package events_test

import (
	"bytes"
	"testing"

	"github.com/tailproof/tailproof/events"
)

// A line longer than the reader's buffer (256 KiB) is accumulated in a
// buffer that never grows past the line limit: append's own growth would
// give a line just under the limit a buffer of up to 1.25× it (ADR 0030's
// bound is the limit). The bytes are the line's, whole.
func TestLongLineBufferStaysWithinTheLimit(t *testing.T) {
	const limit = 700 << 10
	for _, n := range []int{300 << 10, 600 << 10, limit - 1, limit} {
		line := bytes.Repeat([]byte{'a'}, n)
		in := append(append(append([]byte(nil), line...), '\n'), "{}\n"...)
		got := 0
		for l, err := range events.Lines(bytes.NewReader(in), limit) {
			if err != nil {
				t.Fatal(err)
			}
			if got++; got == 1 {
				if l.TooLong || !bytes.Equal(l.Bytes, line) {
					t.Fatalf("%d-byte line: too long %v, %d bytes back", n, l.TooLong, len(l.Bytes))
				}
				if cap(l.Bytes) > limit {
					t.Fatalf("%d-byte line held in a buffer of %d bytes, over the %d limit", n, cap(l.Bytes), limit)
				}
			}
		}
		if got != 2 {
			t.Fatalf("%d-byte line: %d lines, want 2", n, got)
		}
	}
}
