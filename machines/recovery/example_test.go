package recovery_test

import (
	"fmt"

	"github.com/tailproof/tailproof/machines/recovery"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/interruption"
)

// A plan over an empty history, and the same prompt settled by its own
// turn_result: nothing to continue either way, and the reason says which.
func ExamplePlan() {
	st := recovery.Plan(recovery.Input{History: apihistory.Result{}, Mode: interruption.Provenance})
	fmt.Println(st.Kind, st.CanContinue, st.Reason)
	st = recovery.Plan(recovery.Input{Mode: interruption.Provenance, Identity: true, Target: "p1", TurnResult: "completed"})
	fmt.Println(st.Kind, st.SettledBy, st.Reason)
	// Output:
	// clean false the last turn settled: nothing to continue
	// clean p1 the transcript's turn_result for p1 says completed
}
