package conformance_test

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/simulations/conformance"
)

// Scenarios are a pure function of (seed, index), so a failure reported as
// "s7-42" is rebuilt exactly by Generate(7, 42).
func ExampleGenerate() {
	a := conformance.Generate(7, 42)
	b := conformance.Generate(7, 42)
	fmt.Println(a.ID, a.Ledger == b.Ledger, *a.Transcript == *b.Transcript)
	fmt.Println(strings.Count(a.Ledger, `"state":"in_flight"`) >= 1)
	// Output:
	// s7-42 true true
	// true
}
