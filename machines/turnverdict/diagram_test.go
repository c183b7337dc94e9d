package turnverdict_test

import (
	"fmt"

	"github.com/tailproof/tailproof/machines/turnverdict"
)

// The verdict machine's table as a Mermaid diagram.
func ExampleTable() {
	fmt.Print(turnverdict.Table.Mermaid())
	// Output:
	// stateDiagram-v2
	//     [*] --> open
	//     open --> completed: complete
	//     open --> interrupted: interrupt
	//     open --> unknown: give-up
}
