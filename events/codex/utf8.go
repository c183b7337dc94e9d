package codex

import (
	"unicode/utf8"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
	"github.com/tailproof/tailproof/events/internal/objscan"
)

// Codex reads a rollout with read_to_string, so a line holding invalid
// UTF-8 anywhere is not a line it reads. Checking the whole line before
// parsing is a second pass over every byte, tool outputs included; instead
// the long strings the codec skips are checked as they are validated
// (jsonscan.String says whether a string holds a byte >= 0x80, and only
// then is it run through utf8.Valid), and what lies between them, after a
// successful parse, is checked with utf8.Valid. A string starts and ends
// at an ASCII quote, so no UTF-8 sequence straddles a boundary: the pieces
// are valid exactly when the line is. FuzzDecode's oracle is utf8.Valid on
// the whole line.

// skip validates and skips the value at d.b[v] (depth containers deep),
// recording a long string (objscan.Longs).
func (d *decoder) skip(v, depth int) (int, error) {
	b := d.b
	if b[v] != '"' {
		return objscan.Skip(b, v, depth, maxDepth)
	}
	end, _, nonASCII, err := jsonscan.String(b, v)
	if err != nil {
		return 0, err
	}
	if end-v >= objscan.LongMin {
		if nonASCII && !utf8.Valid(b[v+1:end-1]) {
			d.badUTF8 = true
		}
		d.longs.Add(v, end)
	}
	return end, nil
}

// validUTF8 reports whether the parsed line d.b is valid UTF-8: the
// recorded strings were, and every byte outside them is.
func (d *decoder) validUTF8() bool {
	return !d.badUTF8 && d.longs.Gaps(d.b, utf8.Valid)
}

// oneLine is validUTF8 for a line parsed where it lies in the reader's
// buffer: also, no '\n' outside the recorded strings (where the fused read
// would have read more than one line as one).
func (d *decoder) oneLine() bool {
	return !d.badUTF8 && d.longs.Gaps(d.b, func(g []byte) bool { return objscan.NoNewline(g) && utf8.Valid(g) })
}
