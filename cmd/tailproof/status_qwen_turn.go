package main

import (
	"context"
	"io"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events/qwen"
)

// qwenTranscriptTurn is the `turn` object of a Qwen status that read no
// ledger (ADR 0041): machines/turnverdict's decision on the transcript's
// last turn, through qwen.Harness — the contract every harness's
// `status --harness … --file` prints (ADR 0028). With a ledger the
// reconcile core knows more (admissions, terminals, markers) and its turn
// object (ADR 0033) stands. A missing transcript has no turns: nil.
func qwenTranscriptTurn(ctx context.Context, sess *cli.Session, writerStopped bool) (*tailproof.TurnSummary, error) {
	open := func(ctx context.Context) (io.ReadCloser, error) { return sess.OpenTranscript(ctx)() }
	rep, err := tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: qwen.Harness(), WriterStopped: writerStopped})
	if err != nil || rep.Last == nil {
		return nil, err
	}
	s := tailproof.Summary(*rep.Last, nil)
	return &s, nil
}
