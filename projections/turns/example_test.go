package turns_test

import (
	"fmt"

	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

func ExampleClosers() {
	user := &dsh.Source{Kind: "user"}
	log := []dsh.Record{
		dsh.NewRecord(0, 100, &dsh.TurnStart{Turn: 1, Trigger: dsh.Trigger{Kind: "message", Source: user}}),
		dsh.NewRecord(1, 101, &dsh.StepStart{Turn: 1, Step: 1}),
		dsh.NewRecord(2, 102, &dsh.AssistantMessage{Turn: 1, Step: 1, Content: []dsh.Block{
			{Type: "tool-call", ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`},
		}}),
		// the process died here, before the tool's result was written
	}
	closers, err := turns.Closers(log)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range closers {
		fmt.Printf("%s\n", dsh.AppendRecord(nil, c))
	}
	// Output:
	// {"type":"tool/result","seq":3,"time":102,"data":{"turn":1,"step":1,"callId":"call_1","content":[{"type":"text","text":"Tool call interrupted by a crash; no result was recorded."}],"isError":true,"error":{"name":"InterruptedError","code":"interrupted"}}}
	// {"type":"step/end","seq":4,"time":102,"data":{"turn":1,"step":1}}
	// {"type":"turn/end","seq":5,"time":102,"data":{"turn":1,"reason":{"kind":"interrupted"}}}
}
