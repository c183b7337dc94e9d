package guards

import "fmt"

// Race requires the ledger to be unchanged between the snapshot the decision
// was made from and the moment of the append (reference V13/V14): a prompt
// admitted meanwhile may own the tail the verdict was computed from.
var Race Guard[*Evidence] = Func("race", func(e *Evidence) string {
	if e.RefetchErr != "" {
		return "ledger re-read failed: " + e.RefetchErr
	}
	if e.RefetchLen != e.LedgerLen {
		return fmt.Sprintf("ledger changed while deciding (%d records, now %d)", e.LedgerLen, e.RefetchLen)
	}
	return ""
})
