package qwen

import (
	"encoding/binary"
	"math/bits"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// Strings are read by jsonscan.String: 64 bytes at a time with AVX2 where
// the CPU has it (the default amd64 build, ADR 0038), else with its
// word-at-a-time block skipper (ADR 0029). Tool outputs are most of a
// transcript's bytes and in real sessions hold an escape every few bytes
// (source files, JSON, shell output); a block scan classifies a whole
// block at once and finds its escapes with carries, as simdjson does.
// Validation is the same grammar in both packages (jsonscan differs only
// in how it decodes lone surrogates, which a skipped string never is).

// skipString skips the string whose opening quote is at s.i.
func (s *scanner) skipString() bool {
	_, _, ok := s.stringEnd()
	return ok
}

// stringEnd scans a string whose opening quote is at s.i, leaving s.i after
// the closing quote. It reports whether the string holds escapes and
// whether it is plain (no escapes, only ASCII), which saves a second pass
// over the strings that are kept. jsonscan.String reads it; the scalar
// scanner reads it again when it is invalid, to report the error in this
// package's words.
func (s *scanner) stringEnd() (escaped, plain, ok bool) {
	// Most strings a record holds besides its tool output are short and
	// plain (ids, the session id, timestamps, cwd, version, provenance):
	// their quote is found here, a word at a time, without String's two
	// calls. Anything else (a backslash or control byte first, no quote in
	// shortRun bytes) is read by String from the opening quote again.
	b := s.b
	if i := s.i + 1; i <= len(b) {
		n := min(len(b)-i, shortRun)
		var hi uint64 // the OR of the string's bytes
		for k := 0; k+8 <= n; k += 8 {
			w := binary.LittleEndian.Uint64(b[i+k:])
			if m := stopMask(w); m != 0 {
				if j := i + k + bits.TrailingZeros64(m)>>3; b[j] == '"' {
					s.i = j + 1
					return false, (hi|w&(m&-m-1))&msb == 0, true
				}
				break
			}
			hi |= w
		}
	}
	if end, esc, nonASCII, err := jsonscan.String(s.b, s.i); err == nil {
		s.i = end
		return esc, !esc && !nonASCII, true
	}
	if s.oneLine {
		// The fused read drops a failed parse (and its words) and reads
		// the line again the old way: no second scan to name the error.
		return false, false, s.fail("invalid string")
	}
	return s.stringEndScalar()
}

// shortRun is how much of a string stringEnd reads by words before calling
// jsonscan.String (a multiple of 8): the 36-byte session id and its quote
// fit.
const shortRun = 48

// escapeLen is the length of an escape by the byte after its backslash: 2
// for the one-character escapes, 6 for \u (whose four hex digits are
// checked apart), 0 for an invalid escape.
var escapeLen = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}
