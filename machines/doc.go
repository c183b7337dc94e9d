// Package machines holds tailproof's explicit state machines and the
// runner they share.
//
// A Table lists a machine's transitions; Mermaid and Dot render it (the
// diagrams in README and `tailproof diagram` are the tables' own). Machine
// runs a Table on looplab/fsm with the guards of each event (package
// guards): every Fire is serialized, runs with a context that cannot be
// cancelled, collects every veto of a refused transition, and reports an
// event the table does not allow from the current state as ErrIllegal, never
// as a silent no-op.
//
// The machines:
//
//   - Admission (admission.go): whether a recovery continuation may start
//     now; live turns are facts, a continuation is a guarded request
//     (NoActiveTurn, RecoveryAllows).
//   - Lifecycle (lifecycle.go): one prompt's life, admitted to exactly one
//     terminal (ErrDuplicateTerminal).
//   - RepairEpisode (repair_episode.go): a live client's one validated
//     reload after a prompt's terminal; it returns the actions for its
//     caller to perform.
//
// Subpackages: reconcile is the pure decision core (its own stepper over its
// Table, typed states and events: one machine per dangling prompt), and
// recovery is the pure recovery plan that tailproof.Status returns.
package machines
