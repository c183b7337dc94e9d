package qwen

import (
	"encoding/binary"
	"math/bits"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// Skipping a string nobody reads, 64 bytes at a time: with vector
// instructions where the machine has them (strskip_simd.go), else with
// jsonscan.String's word-at-a-time block skipper (ADR 0029). Tool outputs
// are most of a transcript's bytes and in real sessions hold an escape
// every few bytes (source files, JSON, shell output); a scanner that stops
// at each is content-dependent, a block scan classifies a whole block at
// once and finds its escapes with carries, as simdjson does. Validation is
// the same grammar in both packages (jsonscan differs only in how it
// decodes lone surrogates, which a skipped string never is).

// skipString skips the string whose opening quote is at s.i: the vector
// block scanner when it can vouch for the whole string, else stringEnd,
// which also reports every error (the block scanners never do).
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

// stringEnd scans a string whose opening quote is at s.i, leaving s.i after
// the closing quote. It reports whether the string holds escapes and
// whether it is plain (no escapes, only ASCII), which saves a second pass
// over the strings that are kept. jsonscan.String reads it (by blocks
// where escapes are dense); the scalar scanner reads it again when it is
// invalid, to report the error in this package's words.
func (s *scanner) stringEnd() (escaped, plain, ok bool) {
	if end, esc, nonASCII, err := jsonscan.String(s.b, s.i); err == nil {
		s.i = end
		return esc, !esc && !nonASCII, true
	}
	return s.stringEndScalar()
}

// shortString is how much of a string skipString reads word by word
// before a block scan (a multiple of 8, below 64).
const shortString = 32

// escapeLen is the length of an escape by the byte after its backslash: 2
// for the one-character escapes, 6 for \u (whose four hex digits are
// checked apart), 0 for an invalid escape.
var escapeLen = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}
