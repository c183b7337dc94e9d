// Package guards holds the Guard contract and its combinators.
//
// A guard is a small value that looks at the evidence for a proposed state
// transition and either allows it or vetoes it with its own name and a human
// reason. Machines (package machines) consult guards on every transition; a
// decision records every veto, so "unknown" is always explained.
//
// Guards are generic over the evidence type: the reconcile machine's guards
// read reconcile evidence (Evidence, filled by the decision core from the
// ledger view and projections/attribution), the admission machine's read
// ownership, and a harness can write its own for either without editing
// tailproof (see Example). The reference rules V1–V14 that guard comments
// cite are quoted from Qwen Code 0.24.4 in docs/reference-rules.md.
package guards
