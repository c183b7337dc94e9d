package turnrules_test

import (
	"fmt"

	"github.com/tailproof/tailproof/guards/turnrules"
)

// The composite guards print the rules they check, in order.
func Example() {
	fmt.Println(turnrules.Completed)
	fmt.Println(turnrules.Interrupted)
	fmt.Println(turnrules.Resend)
	// Output:
	// all(intact-span, sequence-unbroken, end-names-turn, completion-recorded, no-interrupt-marker, calls-answered, final-answer, no-trailing-error)
	// all(intact-span, sequence-unbroken, end-names-turn, any(abort-recorded, interrupt-marker, all(no-end-record, turn-over, unfinished-work)))
	// all(prompt-recorded, prompts-intact, provenance-carried)
}
