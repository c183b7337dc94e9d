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

// checkedMin is the shortest string worth recording as checked: shorter
// ones are left to the gap check.
const checkedMin = 64

// skip validates and skips the value at d.b[v] (depth containers deep),
// recording a long string as checked.
func (d *decoder) skip(v, depth int) (int, error) {
	b := d.b
	if b[v] != '"' {
		return objscan.Skip(b, v, depth, maxDepth)
	}
	end, _, nonASCII, err := jsonscan.String(b, v)
	if err != nil {
		return 0, err
	}
	if end-v >= checkedMin && d.nchecked < len(d.checked) {
		if nonASCII && !utf8.Valid(b[v+1:end-1]) {
			d.badUTF8 = true
		}
		d.checked[d.nchecked] = span{v, end}
		d.nchecked++
	}
	return end, nil
}

// validUTF8 reports whether the parsed line d.b is valid UTF-8: the
// checked strings were, and every byte outside them is.
func (d *decoder) validUTF8() bool {
	if d.badUTF8 {
		return false
	}
	b, prev := d.b, 0
	for _, s := range d.checked[:d.nchecked] {
		if !utf8.Valid(b[prev:s.start]) {
			return false
		}
		prev = s.end
	}
	return utf8.Valid(b[prev:])
}
