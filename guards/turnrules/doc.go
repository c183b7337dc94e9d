// Package turnrules holds the guards that decide a turn of any harness from
// its evidence (projections/turnfold.Evidence): one file per guard, each a
// value that prints its name and, when it refuses, a reason a person reads.
// Completed, Interrupted and Resend compose them; machines/turnverdict runs
// them. The rules, and the producer behaviour each relies on, are ADR 0019
// (docs/adr/0019-turn-verdicts-and-resend.md).
package turnrules
