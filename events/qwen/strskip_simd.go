//go:build goexperiment.simd && amd64

package qwen

import (
	"math/bits"
	"simd/archsimd"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// haveBlockScan: built with GOEXPERIMENT=simd on a CPU with AVX2.
var haveBlockScan = archsimd.X86.AVX2()

// skipStringBlocks finds the end of the valid string whose body starts at
// b[i], 64 bytes per step: it returns the index after the closing quote,
// or ok false when the string is not valid (or runs off b) — the scalar
// scanner then reads it again and reports why. A block holding a \u
// escape, whose hex digits the masks do not check, is stepped through by
// scalarRest.
func skipStringBlocks(b []byte, i int) (end int, ok bool) {
	var (
		quote  = archsimd.BroadcastUint8x32('"')
		bslash = archsimd.BroadcastUint8x32('\\')
		ctlMax = archsimd.BroadcastUint8x32(0x1f)
		u      = archsimd.BroadcastUint8x32('u')
		// The other bytes a backslash may escape; '"' and '\\' are above.
		e1, e2, e3 = archsimd.BroadcastUint8x32('/'), archsimd.BroadcastUint8x32('b'), archsimd.BroadcastUint8x32('f')
		e4, e5, e6 = archsimd.BroadcastUint8x32('n'), archsimd.BroadcastUint8x32('r'), archsimd.BroadcastUint8x32('t')
		carry      uint64
	)
	for i+64 <= len(b) {
		var bs, q, ctl, valid, us uint64
		for h := 0; h < 2; h++ {
			v := archsimd.LoadUint8x32Slice(b[i+32*h : i+32*h+32])
			isQ, isBS := v.Equal(quote), v.Equal(bslash)
			isU := v.Equal(u)
			ok := isQ.Or(isBS).Or(isU).Or(v.Equal(e1)).Or(v.Equal(e2)).Or(v.Equal(e3)).
				Or(v.Equal(e4)).Or(v.Equal(e5)).Or(v.Equal(e6))
			sh := uint(32 * h)
			bs |= uint64(isBS.ToBits()) << sh
			q |= uint64(isQ.ToBits()) << sh
			ctl |= uint64(v.Min(ctlMax).Equal(v).ToBits()) << sh
			valid |= uint64(ok.ToBits()) << sh
			us |= uint64(isU.ToBits()) << sh
		}
		escaped, next := jsonscan.EscapedBits(bs, carry)
		real := q &^ escaped
		before := ^uint64(0) // the string's bytes in this block
		if real != 0 {
			before = real&-real - 1
		}
		if ctl&before != 0 || escaped&before&^valid != 0 {
			return 0, false
		}
		if escaped&before&us != 0 {
			// \u escapes: step through the block (its first byte is not
			// escaped when carry is 0; when it is, start at the backslash).
			start := i
			if carry != 0 {
				start--
			}
			j, done, ok := scalarRest(b, start, i+64)
			if !ok || done {
				return j, ok
			}
			i, carry = j, 0
			continue
		}
		if real != 0 {
			return i + bits.TrailingZeros64(real) + 1, true
		}
		i, carry = i+64, next
	}
	if carry != 0 {
		i-- // back to the backslash whose escape starts the rest
	}
	j, done, ok := scalarRest(b, i, len(b))
	return j, done && ok
}

// scalarRest finishes a valid string from b[i] (not inside an escape) up
// to limit: it returns the index after the closing quote (done), or the
// first index at or past limit outside an escape (not done), or ok false
// when the bytes are not a valid string's.
func scalarRest(b []byte, i, limit int) (j int, done, ok bool) {
	for ; i < limit; i++ {
		if i >= len(b) {
			return 0, false, false
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true, true
		case c == '\\':
			if i+1 >= len(b) {
				return 0, false, false
			}
			n := int(escapeLen[b[i+1]])
			if n == 0 || n == 6 && (i+6 > len(b) || !isHex4(b[i+2:i+6])) {
				return 0, false, false
			}
			i += n - 1
		case c < 0x20:
			return 0, false, false
		}
	}
	return i, false, true
}
