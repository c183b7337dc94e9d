package natsjs_test

import (
	"fmt"

	"github.com/tailproof/tailproof/adapters/natsjs"
)

// Every worker and publisher of a deployment shares one Topology: a session
// always maps to the same load stream, so its load events are handled in
// order, one at a time, across the whole worker group.
func ExampleTopology() {
	topo := natsjs.Topology{Partitions: 4}
	fmt.Println(topo.LoadTopics())
	fmt.Println(topo.LoadTopic("00000000-0000-4000-8000-000000000001"))
	fmt.Println(topo.DecisionTopic(), topo.TerminalTopic(), topo.PoisonTopic(), topo.LeaseBucket())
	// Output:
	// [tailproof-load-0 tailproof-load-1 tailproof-load-2 tailproof-load-3]
	// tailproof-load-2
	// tailproof-decision tailproof-terminal tailproof-poison tailproof-leases
}
