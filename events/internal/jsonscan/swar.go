package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// The block skipper: a string body 64 bytes per step in plain Go, eight
// 64-bit words per block (SWAR, SIMD within a register). Tool outputs are
// most of a transcript's bytes and hold an escape every few bytes in real
// sessions (source files, JSON, shell output); the word loop of String
// stops at each, the block skipper classifies a whole block with exact
// zero-byte tests, finds which bytes the backslashes escape with carries
// (EscapedBits), and only then looks at the escaped bytes one by one.
//
// It never reports an error: at anything it cannot vouch for (a control
// byte, an invalid escape, a \u escape whose four hex digits are not there)
// it hands back the start of the block, outside any escape, and String's
// scalar loop reads the rest and names the error. See ADR 0029.

// zeroBytes sets the high bit of each byte of x that is zero, and only of
// those: (x&0x7f)+0x7f cannot carry out of its byte, so unlike the classic
// haszero test no borrow flags a byte above a zero one.
func zeroBytes(x uint64) uint64 {
	const low7 = lsb * 0x7f
	return ^((x&low7 + low7) | x) & msb
}

// belowQuote sets the high bit of each byte of w that is a quote or a
// control byte (below 0x20), and only of those: x = w^0x02 maps exactly
// those bytes below 0x21, and (x|0x80)-0x21 cannot borrow across a byte.
func belowQuote(w uint64) uint64 {
	x := w ^ (lsb * 0x02)
	return ^((x | msb) - lsb*0x21 | x) & msb
}

// packHigh gathers the high bits of the eight bytes of m (other bits
// clear) into the low byte: bit 8k+7 lands at bit 56+k, then shifts down.
// The products of distinct bits land at distinct positions, so nothing
// carries into the top byte.
func packHigh(m uint64) uint64 {
	return m * 0x0002040810204081 >> 56
}

// EscapedBits takes the backslash positions of a 64-byte block (bit i for
// byte i) and whether its first byte is escaped by a backslash run ending
// the previous block (carry 1), and returns the escaped bytes (each byte
// right after a backslash that is not itself escaped) and the carry into
// the next block.
//
// A run of backslashes escapes every second byte from its start, so what
// matters is the parity of each run's start: adding a run's start bit to
// the run carries out just past its end, and the odd-bit pattern tells
// which runs started on an odd or even position (simdjson's
// json_escape_scanner, 2023).
func EscapedBits(bs, carry uint64) (escaped, next uint64) {
	const odd = 0xAAAAAAAAAAAAAAAA
	potential := bs &^ carry // a backslash that is escaped starts nothing
	maybeEscaped := potential << 1
	code := ((maybeEscaped | odd) - potential) ^ odd
	escaped = code ^ (bs | carry)
	next = (code & bs) >> 63
	return escaped, next
}

// escapeKind classifies the byte after a backslash: 1 for the one-character
// escapes, 2 for u (four hex digits follow), 0 for an invalid escape.
var escapeKind = [256]uint8{'"': 1, '\\': 1, '/': 1, 'b': 1, 'f': 1, 'n': 1, 'r': 1, 't': 1, 'u': 2}

// String hands a string to skipBlocks at a backslash less than denseGap
// bytes after the previous one, with at least blockMin bytes of input left;
// skipBlocks hands it back after a block of fewer than sparseBlock
// backslashes. A block costs about what the word loop spends on two or
// three escapes: ls listings (an escape per 64-byte line) stay in the word
// loop, source files and JSON (one byte in eight a backslash) go by
// blocks. The values are BenchmarkString's best (ADR 0029).
const (
	blockMin    = 64
	denseGap    = 32
	sparseBlock = 2
)

// What skipBlocks found.
const (
	blocksDone    = iota // the string ends in the blocks read
	blocksTail           // fewer than 64 bytes are left
	blocksSparse         // the last block held few escapes
	blocksRefused        // a block it could not vouch for
)

// skipBlocks reads the string body from b[i] (not inside an escape) one
// 64-byte block at a time. done: the string is valid and ends at end (just
// past its closing quote). Otherwise end is where String's scalar loop must
// go on, never inside an escape: the first block skipBlocks could not vouch
// for (refused), the tail shorter than a block, or the block after one with
// few escapes (sparse). nonASCII reports a byte >= 0x80 in the bytes it
// vouched for.
func skipBlocks(b []byte, i int) (end int, nonASCII bool, status int) {
	var carry, hi uint64
	for i+64 <= len(b) {
		blk := b[i : i+64 : i+64]
		var bs, stop, wh uint64
		for k := 0; k < 64; k += 8 {
			w := binary.LittleEndian.Uint64(blk[k:])
			bs |= packHigh(zeroBytes(w^lsb*'\\')) << k
			stop |= packHigh(belowQuote(w)) << k
			wh |= w
		}
		escaped, next := EscapedBits(bs, carry)
		stop &^= escaped     // the quotes and control bytes no backslash escapes
		before := ^uint64(0) // the string's bytes in this block
		if stop != 0 {
			before = stop&-stop - 1
		}
		// An escaped quote or backslash is valid by the masks; any other
		// escaped byte (a control byte among them) is looked at.
		if !validEscapes(b, i, escaped&before&^bs) || stop != 0 && blk[bits.TrailingZeros64(stop)] != '"' {
			// Back to the backslash when its escape starts the block.
			return i - int(carry), hi&msb != 0, blocksRefused
		}
		if stop != 0 {
			n := bits.TrailingZeros64(stop)
			return i + n + 1, hi&msb != 0 || highBefore(blk, n), blocksDone
		}
		i, carry, hi = i+64, next, hi|wh
		if bits.OnesCount64(bs) < sparseBlock {
			return i - int(carry), hi&msb != 0, blocksSparse
		}
	}
	return i - int(carry), hi&msb != 0, blocksTail
}

// highBefore reports a byte >= 0x80 among blk[:n].
func highBefore(blk []byte, n int) bool {
	var acc uint64
	k := 0
	for ; k+8 <= n; k += 8 {
		acc |= binary.LittleEndian.Uint64(blk[k:])
	}
	if k < n {
		acc |= binary.LittleEndian.Uint64(blk[k:]) & (1<<(8*uint(n-k)) - 1)
	}
	return acc&msb != 0
}

// validEscapes reports whether every escaped byte (esc, bit k for b[i+k])
// makes a valid escape: one of "\/bfnrt, or u followed by four hex digits.
// skipBlocks leaves out the escaped quotes and backslashes, valid by
// their masks.
// The digits may run into the next block; not being quotes or backslashes,
// they change nothing the masks there say.
func validEscapes(b []byte, i int, esc uint64) bool {
	for ; esc != 0; esc &= esc - 1 {
		p := i + bits.TrailingZeros64(esc)
		switch escapeKind[b[p]] {
		case 1:
		case 2:
			if p+5 > len(b) || Hex4(b[p+1:p+5]) < 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
