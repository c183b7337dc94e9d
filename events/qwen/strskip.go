package qwen

import (
	"encoding/binary"
	"math/bits"
)

// Skipping a string nobody reads, 64 bytes at a time where the machine
// has vector instructions (strskip_simd.go), the scalar scanner elsewhere.
// Tool outputs are most of a transcript's bytes and in real sessions hold
// an escape every few bytes (source files, JSON, shell output); the
// scalar scanner stops at each, a vector scan classifies a whole block at
// once and finds its escapes with carries, as simdjson does.

// escapedBits takes the backslash positions of a 64-byte block (bit i for
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
func escapedBits(bs, carry uint64) (escaped, next uint64) {
	const odd = 0xAAAAAAAAAAAAAAAA
	potential := bs &^ carry // a backslash that is escaped starts nothing
	maybeEscaped := potential << 1
	code := ((maybeEscaped | odd) - potential) ^ odd
	escaped = code ^ (bs | carry)
	next = (code & bs) >> 63
	return escaped, next
}

// skipString skips the string whose opening quote is at s.i: the block
// scanner when it can vouch for the whole string, else the scalar scanner,
// which also reports every error (the block scanner never does).
func (s *scanner) skipString() bool {
	if b := s.b; haveBlockScan && len(b)-s.i > 64 {
		// Most strings are short and plain: their quote is in the first
		// words, found before a block scan's setup.
		for i := s.i + 1; i < s.i+1+shortString; i += 8 {
			if m := stopMask(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
				if j := i + bits.TrailingZeros64(m)>>3; b[j] == '"' {
					s.i = j + 1
					return true
				}
				break
			}
		}
		if end, ok := skipStringBlocks(b, s.i+1); ok {
			s.i = end
			return true
		}
	}
	_, _, ok := s.stringEnd()
	return ok
}

// shortString is how much of a string skipString reads word by word
// before a block scan (a multiple of 8, below 64).
const shortString = 32

// escapeLen is the length of an escape by the byte after its backslash: 2
// for the one-character escapes, 6 for \u (whose four hex digits are
// checked apart), 0 for an invalid escape.
var escapeLen = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}
