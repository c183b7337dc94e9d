package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// The vector block skipper: where the CPU has vector instructions
// (block_amd64.s, AVX2), classify64 turns 64 bytes of a string body into
// four bit masks in a few dozen instructions, and vectorBlocks, in Go,
// finds with EscapedBits's carries which bytes the backslashes escape, as
// swar.go's skipBlocks does with masks built a word at a time. Unlike the
// word skipper it costs the same per block whatever the content, so String
// enters it for every string longer than a few words (ADR 0038).

// useVector is whether String uses vectorBlocks: haveVector, switched off
// by the tests that exercise the portable path on the same machine.
var useVector = haveVector

// vectorPrefix is how much of a string String reads word by word before a
// block (a multiple of 8, below 64): most strings are short and plain, and
// their quote is found before a block's setup. 48, not 32 (until
// 2026-12-02): a Qwen record holds 36-byte UUIDs (sessionId on every
// record; uuid and parentUuid as Qwen Code writes them), which 32 sent to
// a block each — a 36-byte string took about half the time with 48.
const vectorPrefix = 48

// simpleEscape flags the bytes that make a one-character escape after a
// backslash.
var simpleEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// classifyBytes is classify64 one byte at a time: its specification, and
// its implementation where there is no vector code.
func classifyBytes(blk *[64]byte) (bs, stop, odd, high uint64) {
	for k, c := range blk {
		bit := uint64(1) << k
		if c == '\\' {
			bs |= bit
		}
		if c == '"' || c < 0x20 {
			stop |= bit
		}
		if !simpleEscape[c] {
			odd |= bit
		}
		if c >= 0x80 {
			high |= bit
		}
	}
	return bs, stop, odd, high
}

// vectorBlocks reads the string body from b[i] (not inside an escape) one
// 64-byte block at a time, as skipBlocks does (same statuses, never an
// error): blocksDone with end just past the closing quote of a valid
// string, else end is where String's scalar loop goes on, never inside an
// escape: the first block it could not vouch for (blocksRefused) or the
// tail shorter than a block (blocksTail). escaped and nonASCII report a
// backslash and a byte >= 0x80 among the bytes it vouched for.
//
// plainBlocks passes the blocks that need no look — no stop outside an
// escape, no escaped odd byte — in one loop (one call for a whole tool
// output, not one a block), and returns the first other block's masks.
func vectorBlocks(b []byte, i int) (end int, escaped, nonASCII bool, status int) {
	var carry, bsSeen, hi uint64
	for {
		j, c, seen, h, bs, stop, odd, high := plainBlocks(b, i, carry)
		i, carry, bsSeen, hi = j, c, bsSeen|seen, hi|h
		if i+64 > len(b) {
			break
		}
		esc, next := EscapedBits(bs, carry)
		stop &^= esc         // the quotes and control bytes no backslash escapes
		before := ^uint64(0) // the string's bytes in this block
		if stop != 0 {
			before = stop&-stop - 1
		}
		// An escaped byte of a one-character escape is valid by the masks;
		// a u (four hex digits must follow) or any other is looked at.
		if e := esc & before & odd; e != 0 && !validEscapes(b, i, e) {
			return i - int(carry), bsSeen != 0, hi != 0, blocksRefused
		}
		if stop != 0 {
			n := bits.TrailingZeros64(stop)
			if b[i+n] != '"' { // a control byte: String names the error
				return i - int(carry), bsSeen != 0, hi != 0, blocksRefused
			}
			return i + n + 1, bsSeen|bs&before != 0, hi|high&before != 0, blocksDone
		}
		i, carry, bsSeen, hi = i+64, next, bsSeen|bs, hi|high
	}
	// Back to the backslash when its escape starts the rest.
	return i - int(carry), bsSeen != 0, hi != 0, blocksTail
}

// plainBlocksSpec is plainBlocks (block_amd64.s) in Go over classify64: from
// b[i], with the escape carry in, it passes each 64-byte block that holds
// no stop outside an escape and no escaped odd byte, and returns where it
// stopped (the first other block, or where fewer than 64 bytes are left),
// the carry into there, the OR of the passed blocks' backslash masks
// (seen), a value that is not 0 exactly when a passed byte is >= 0x80
// (high), and the masks of the block it stopped at (all 0 at the tail).
func plainBlocksSpec(b []byte, i int, carry uint64) (j int, carryOut, seen, high, bs, stop, odd, blkHigh uint64) {
	for ; i+64 <= len(b); i += 64 {
		bs, stop, odd, blkHigh = classify64((*[64]byte)(b[i : i+64]))
		esc, next := EscapedBits(bs, carry)
		if stop&^esc != 0 || esc&odd != 0 {
			return i, carry, seen, high, bs, stop, odd, blkHigh
		}
		carry, seen, high = next, seen|bs, high|blkHigh
	}
	return i, carry, seen, high, 0, 0, 0, 0
}

// vectorString reads the string body from b[i] (len(b)-i >= vectorPrefix+64):
// its first words up to the first quote, backslash or control byte, then
// blocks from there (vectorBlocks's results, the words' bytes included).
func vectorString(b []byte, i int) (end int, escaped, nonASCII bool, status int) {
	var hi uint64
	for stop := i + vectorPrefix; i < stop; i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		if m := stopMask(w); m != 0 {
			hi |= w & ((m & -m) - 1)
			i += bits.TrailingZeros64(m) >> 3
			if b[i] == '"' {
				return i + 1, false, hi&msb != 0, blocksDone
			}
			break
		}
		hi |= w
	}
	end, escaped, nonASCII, status = vectorBlocks(b, i)
	return end, escaped, nonASCII || hi&msb != 0, status
}
