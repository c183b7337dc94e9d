package turnrules

import (
	"strings"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// SequenceUnbroken allows only when the harness's own sequence numbers rise
// by one through the turn. Codex's paginated rollouts number every line
// (ordinal); a gap or a reuse after an unfinished turn is what froze resumes
// in Codex #35746, #41566 and #41657, and means the file is not the sequence
// the writer wrote.
var SequenceUnbroken guards.Guard[*turnfold.Evidence] = guards.Func("sequence-unbroken", func(e *turnfold.Evidence) string {
	if len(e.Turn.SeqProblems) == 0 {
		return ""
	}
	return strings.Join(e.Turn.SeqProblems, "; ")
})
