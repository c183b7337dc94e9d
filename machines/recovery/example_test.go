package recovery_test

import (
	"fmt"

	"github.com/tailproof/tailproof/machines/recovery"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/interruption"
)

// A plan over an empty history, the same with a prompt the ledger left in
// flight (reconcile cannot decide it), and a prompt settled by its own
// turn_result: nothing to continue each time, and the reason says why — an
// empty history settled no turn.
func ExamplePlan() {
	st := recovery.Plan(recovery.Input{History: apihistory.Result{}, Mode: interruption.Provenance})
	fmt.Println(st.Kind, st.CanContinue, st.Reason)
	st = recovery.Plan(recovery.Input{Mode: interruption.Provenance, Dangling: []string{"p1"}, Target: "p1",
		Pending: recovery.Pending{Prompt: "p1", Outcome: recovery.OutcomeUnknown, Why: "transcript-integrity: transcript unusable"}})
	fmt.Println(st.Kind, st.CanContinue, st.Support.Notice.Supported, st.Reason)
	st = recovery.Plan(recovery.Input{Mode: interruption.Provenance, Identity: true, Target: "p1", TurnResult: "completed"})
	fmt.Println(st.Kind, st.SettledBy, st.Reason)
	// Output:
	// clean false the history holds no turn: nothing to continue
	// clean false true no turn settled: prompt p1 is in flight in the ledger and the transcript holds no history, so whether it never started or its records were lost cannot be known (reconcile: unknown: transcript-integrity: transcript unusable); there is nothing to continue
	// clean p1 the transcript's turn_result for p1 says completed
}
