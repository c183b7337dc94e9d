// Package guards holds the Guard contract and its combinators.
//
// A guard is a small value that looks at the evidence for a proposed state
// transition and either allows it or vetoes it with its own name and a human
// reason. Machines (package machines) consult guards on every transition; a
// decision records every veto, so "unknown" is always explained.
//
// Guards are generic over the evidence type: the reconcile machine's guards
// read reconcile evidence, the admission machine's read ownership, and a
// harness can write its own for either without editing tailproof:
//
//	fresh := guards.Func("fresh-ledger", func(e MyEvidence) string {
//		if e.Stale { return "ledger older than one hour" }
//		return ""
//	})
//	g := guards.All(fresh, guards.Not(other))
//	fmt.Println(g) // all(fresh-ledger, not(other))
package guards
