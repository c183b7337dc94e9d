package turnrules

import (
	"strings"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// IntactSpan allows only when every line of the turn decoded and every parent
// link names an earlier record. A bad line followed by good ones is damage in
// the committed region (a record glued to a torn fragment on resume — Codex
// appends after whatever bytes are there; Claude Code #52387, #49876,
// #81843): it may have been this turn's end, an interrupt or a tool result,
// so no verdict of the turn can rest on what is left. A bad line in the gap
// before the turn (after the previous turn's end) cannot have been one of
// this turn's records, so it does not touch the verdict; it may have been a
// prompt, which PromptsIntact weighs. The torn final fragment is not
// damage: it was never written whole, and is discarded.
var IntactSpan guards.Guard[*turnfold.Evidence] = guards.Func("intact-span", func(e *turnfold.Evidence) string {
	t := e.Turn
	var why []string
	if n := len(t.Damage); n > 0 {
		why = append(why, "undecodable line(s) inside the turn at "+positions(t.Damage))
	}
	if len(t.ChainBreaks) > 0 {
		why = append(why, "broken parent links ("+strings.Join(t.ChainBreaks, "; ")+")")
	}
	return strings.Join(why, "; ")
})
