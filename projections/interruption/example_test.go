package interruption_test

import (
	"fmt"

	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
	"github.com/tailproof/tailproof/projections/interruption"
)

// A notification turn was delivered to the model and the stream died before
// any answer. By shape the tail looks settled; the record's deliveredTurn
// stamp says otherwise.
func ExampleClassify() {
	evs, _ := histtest.ParseRecords(`
u1 user prov=real_user : U build it
a1 assistant prov=assistant_output : M built
n1 user/notification prov=system delivered : Nt explore`)
	f := apihistory.New(apihistory.Options{})
	for _, ev := range evs {
		_ = f.Add(ev)
	}
	res := f.Result()
	for _, mode := range []interruption.Mode{interruption.ShapeOnly, interruption.Provenance} {
		tail := interruption.ClassifiableTail(res, mode)
		v := interruption.Classify(tail, res.CompletedToolCallIDs)
		fmt.Println(mode, v.Kind, "trimmed", tail.Trimmed)
		for _, p := range v.Parts {
			fmt.Println("  from", p.Source.UUID, p.Source.Provenance, "delivered", p.Source.DeliveredTurn)
		}
	}
	// Output:
	// shape none trimmed 1
	// provenance interrupted_prompt trimmed 0
	//   from n1 system delivered true
}

// Dangling calls become synthetic error results.
func ExampleSyntheticToolResponses() {
	h, _ := histtest.ParseEntries("U run it\nFC call-1 shell ++ FC call-2 read_file")
	v := interruption.Detect(h, nil, nil)
	for _, p := range interruption.SyntheticToolResponses(v.DanglingCalls, "interrupted") {
		fmt.Println(string(p.Raw))
	}
	// Output:
	// {"functionResponse":{"id":"call-1","name":"shell","response":{"error":"interrupted"}}}
	// {"functionResponse":{"id":"call-2","name":"read_file","response":{"error":"interrupted"}}}
}
