package simulations_test

import (
	"fmt"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/simulations"
)

func ExampleJudge() {
	for _, c := range []struct {
		v     tailproof.Verdict
		truth simulations.Truth
		lost  bool
	}{
		{tailproof.VerdictCompleted, simulations.TruthCompleted, false},
		{tailproof.VerdictCompleted, simulations.TruthNeverStarted, false},
		{tailproof.VerdictInterrupted, simulations.TruthNeverStarted, false},
		{tailproof.VerdictInterrupted, simulations.TruthCompleted, false},
		{tailproof.VerdictInterrupted, simulations.TruthCompleted, true},
		{tailproof.VerdictUnknown, simulations.TruthInterrupted, false},
	} {
		o, lostCompletion := simulations.Judge(c.v, c.truth, c.lost)
		fmt.Printf("%-11s for %-13s (final record lost: %-5v) -> %s%s\n", c.v, c.truth, c.lost,
			[]string{"unknown", "correct", "WRONG"}[o], map[bool]string{true: " (lost completion)"}[lostCompletion])
	}
	// Output:
	// completed   for completed     (final record lost: false) -> correct
	// completed   for never-started (final record lost: false) -> WRONG
	// interrupted for never-started (final record lost: false) -> correct
	// interrupted for completed     (final record lost: false) -> WRONG
	// interrupted for completed     (final record lost: true ) -> correct (lost completion)
	// unknown     for interrupted   (final record lost: false) -> unknown
}
