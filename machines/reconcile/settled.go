package reconcile

import (
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/guards"
)

// proven reports whether s is a proven, not yet committed verdict.
func proven(s State) bool {
	return s == ProvenCompleted || s == ProvenInterrupted || s == ProvenSettled
}

// settledTerminal is the ledger terminal Qwen Code 0.24.4's serve bridge
// writes for the outcome the prompt's own turn_result records
// (promptLedgerTerminalRecord, chunk-ODAWVZRE.js): {terminal: "cancelled"}
// for a cancelled turn (no code, no stopReason), {terminal: "error", code}
// for an error, the code normalized as the turn_result's is. guards.SettledTurn
// has allowed only the outcomes whose terminal this reproduces exactly.
func settledTerminal(ev *guards.Evidence) (ledger.Record, Verdict) {
	o := ev.Transcript.Ownership
	if o.TurnResult == string(ledger.Cancelled) {
		return ledger.Terminal(ev.Target, ledger.Cancelled, "", "", 0), VerdictCancelled
	}
	return ledger.Terminal(ev.Target, ledger.Error, o.TurnResultErrorCode, "", 0), VerdictError
}

func describeSettled(o guards.OwnershipEvidence) string {
	s := o.TurnResult
	if o.TurnResultCancelledAt {
		s += " (cancelledAt)"
	}
	if o.TurnResultHasError {
		s += " (error code " + orDash(o.TurnResultErrorCode) + ")"
	}
	return s
}
