// Package recovery is the pure recovery plan: from a session's API history
// (projections/apihistory), the reconcile core's target and that prompt's
// turn_result, and the session's live owners, it says what the persisted
// tail means — clean, an interrupted prompt, an interrupted tool turn, or a
// degraded history — which parts a continuation would resend verbatim, and
// whether the evidence supports telling the user, offering a continuation,
// or starting one without asking.
//
// It mirrors Qwen Code 0.24.4's SessionRecoveryPlan kinds and continuation
// modes. The tail is classified by interruption.ClassifyTail, the same step
// the reconcile core's tail routes use; the live-owner check is the
// admission machine's own predicate (machines.NoActiveTurn), so a status
// never offers what admission would refuse. tailproof.Status performs the
// reads and calls Plan.
package recovery
