package guards

import "fmt"

// ErrorCodeInternal is the JSON-RPC internal-error code as Qwen Code
// 0.24.4's normalizeTurnResultError writes it (a string). An error thrown
// out of the agent's prompt() that is not a RequestError reaches the serve
// bridge as RequestError.internalError (-32603; the ACP connection's
// #tryCallRequestHandler, chunk-6HOTTZKB.js), and a RequestError keeps its
// own code; so a turn_result whose error code is -32603 is the one case
// where the bridge's ledger code ({terminal: "error", code: "-32603"},
// promptLedgerTerminalRecord) is known from the transcript. Another code,
// or none, may reach the ledger as -32603 or as itself.
const ErrorCodeInternal = "-32603"

// SettledTurn guards the own-settled-turn route (ADR 0026): the prompt's
// own system/turn_result says how its turn settled, and the verdict is the
// terminal the daemon would have appended for it. Only two outcomes fix
// that terminal exactly: state cancelled with cancelledAt (a cancel the
// agent recorded and flushed before prompt() returned; the bridge writes
// {terminal: "cancelled"}), and state error with error code -32603. Every
// other settled outcome stays unknown.
var SettledTurn Guard[*Evidence] = Func("settled-turn", func(e *Evidence) string {
	if !e.Classification.FromSettledTurn {
		return ""
	}
	o := e.Transcript.Ownership
	switch {
	case o.TurnResult == "cancelled" && o.TurnResultCancelledAt:
		return ""
	case o.TurnResult == "cancelled":
		return fmt.Sprintf("%s's turn_result says cancelled without cancelledAt: not a recorded cancel, so the ledger terminal is not known exactly", e.Target)
	case o.TurnResult == "error" && o.TurnResultHasError && o.TurnResultErrorCode == ErrorCodeInternal:
		return ""
	case o.TurnResult == "error":
		code := o.TurnResultErrorCode
		if code == "" {
			code = "none"
		}
		return fmt.Sprintf("%s's turn_result says error with code %s: the bridge's ledger code is known only for %s", e.Target, code, ErrorCodeInternal)
	}
	return fmt.Sprintf("%s's turn_result says %q: no terminal is known for that outcome", e.Target, o.TurnResult)
})
