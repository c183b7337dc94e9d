package v0_test

import (
	"fmt"
	"strings"

	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// A raw v0 log whose last line was torn by a crash: Scan reports the
// preserved events (a packed row decodes to its three members) and where a
// repair cuts.
func ExampleScan() {
	log := `{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}
{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}
{"type":"text-chunks","seq0":1,"time0":11,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["He","ll","o"]}}
{"type":"assistant/chunk","seq":4,"ti`
	res, err := v0.Scan(strings.NewReader(log), v0.Raw, v0.Options{}, func(r v0.Record) error {
		fmt.Println(r.Describe(), r.Time)
		return nil
	})
	fmt.Println(res.Events, "events; cut at byte", res.Cut, "of", res.Size, err)
	// Output:
	// #0 turn/start 10
	// #1 assistant/chunk 11
	// #2 assistant/chunk 12
	// #3 assistant/chunk 13
	// 4 events; cut at byte 248 of 285 <nil>
}
