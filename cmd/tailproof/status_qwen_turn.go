package main

import (
	"context"
	"io"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// qwenStatusTurn is the `turn` object of a Qwen status
// (tailproof.QwenStatusTurn, ADR 0046): the ledger-based status's last
// prompt when a ledger was read and it names one (ADR 0033), else
// machines/turnverdict's decision on the transcript's last turn through
// qwen.Harness (ADR 0041) — the contract every harness's
// `status --harness … --file` prints (ADR 0028). Nil only when there is no
// turn at all.
func qwenStatusTurn(ctx context.Context, sess *cli.Session, st tailproof.RecoveryStatus, ledgerRead, writerStopped bool) (*tailproof.TurnSummary, error) {
	open := func(ctx context.Context) (io.ReadCloser, error) { return sess.OpenTranscript(ctx)() }
	return tailproof.QwenStatusTurn(ctx, st, open, ledgerRead, writerStopped)
}
