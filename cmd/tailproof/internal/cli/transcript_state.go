package cli

import (
	"context"
	"io"
	"strings"

	"github.com/tailproof/tailproof/adapters"
)

// Transcript states (status's transcriptState): what a crash left of the
// session's transcript in Qwen's layout. A kill right after a prompt's
// admission leaves the ledger's in_flight record and no transcript, or an
// empty one: a state to describe, not bad input.
const (
	TranscriptPresent = "present"
	TranscriptMissing = "missing"
	TranscriptEmpty   = "empty"
)

// TranscriptState says which of the three states the session's transcript
// is in, and the text line that explains a state other than present ("").
func TranscriptState(s *Session) (state, line string) {
	switch {
	case !s.Transcript.Present:
		return TranscriptMissing, "transcript: missing (" + s.Transcript.Path + "): nothing of the session's history was written (a kill right after a prompt's admission leaves this); the status describes an empty history"
	case s.fsys != nil:
		if st, err := s.fsys.Stat(s.Transcript.Path); err == nil && st.Size() == 0 {
			return TranscriptEmpty, "transcript: empty (" + s.Transcript.Path + "): no record was written; the status describes an empty history"
		}
	}
	return TranscriptPresent, ""
}

// EmptyTranscript is a store whose transcript reads as an empty file: the
// history of a session whose transcript is missing, so that Status can
// describe it without inventing a record.
type EmptyTranscript struct{ adapters.Store }

// OpenTranscript returns an empty transcript.
func (EmptyTranscript) OpenTranscript(context.Context, string) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}
