package guards

import "fmt"

// Race requires the ledger to be unchanged between the snapshot the decision
// was made from and the moment of the append (reference V13/V14): a prompt
// admitted meanwhile may own the tail the verdict was computed from. The
// ledger is append-only, so its size is the fence: a change of size is a
// change, and no write leaves the size as it was.
var Race Guard[*Evidence] = Func("race", func(e *Evidence) string {
	if e.RefetchErr != "" {
		return "ledger size check failed: " + e.RefetchErr
	}
	if e.RefetchSize != e.LedgerSize {
		return fmt.Sprintf("ledger changed while deciding (%d bytes, now %d)", e.LedgerSize, e.RefetchSize)
	}
	return ""
})
