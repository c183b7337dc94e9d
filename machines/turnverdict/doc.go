// Package turnverdict decides each turn of a harness's session file from the
// harness-neutral acts of events/turn: completed, interrupted or unknown,
// with the guard that decided or every guard that refused, what a resume
// would send again (a person's prompts only) and which tool calls were left
// without a result.
//
// It is pure: acts in, decisions out. A Decider folds acts as they stream
// (projections/turnfold), holds one turn at a time, and decides a turn when
// the next one opens (the writer moved on) or at Finish. The last turn
// without an end record needs Options.WriterStopped, which only the caller
// can know.
//
// The machine is one state, open, with three ways out; its guards are
// guards/turnrules, and the rules are ADR 0019.
//
//	d := turnverdict.NewDecider(turnverdict.Options{WriterStopped: true})
//	for a, err := range turn.Read(f, codex.Harness()) { … d.Add(a) … }
//	last, _ := d.Finish()
package turnverdict
