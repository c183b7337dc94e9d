package qwen

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// stopMask's lowest flag is the first quote, backslash or control byte of
// the word: every byte value in every lane, over backgrounds of every byte
// value below and random bytes above.
func TestStopMask(t *testing.T) {
	stop := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }
	check := func(w [8]byte) {
		want := 8
		for i, c := range w {
			if stop(c) {
				want = i
				break
			}
		}
		m := stopMask(binary.LittleEndian.Uint64(w[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("stopMask(%q) stops at %d, want %d", w, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for lane := 0; lane < 8; lane++ {
		for c := 0; c < 256; c++ {
			for bg := 0; bg < 256; bg++ {
				var w [8]byte
				for i := range w {
					switch {
					case i < lane:
						w[i] = byte(bg)
						if stop(w[i]) {
							w[i] = 'a'
						}
					case i == lane:
						w[i] = byte(c)
					default:
						w[i] = byte(r.Uint32())
					}
				}
				check(w)
			}
		}
	}
	for range 1 << 20 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
	}
}
