package dshrecovery_test

import (
	"fmt"
	"strings"

	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/projections/dshrecovery"
)

// A crash after the model asked for a tool and the harness recorded the
// call, before the result: the plan cuts the torn line and closes the turn
// with TOOL_OUTCOME_UNKNOWN, a step/end and an interrupted turn/end.
func ExampleDecide() {
	log := `{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}
{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}
{"type":"step/start","seq":1,"time":11,"data":{"turn":1,"step":1}}
{"type":"assistant/message","seq":2,"time":12,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}
{"type":"tool/call","seq":3,"time":13,"data":{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{}"}}
{"type":"tool/res`
	var fold dshrecovery.Fold
	res, err := v0.Scan(strings.NewReader(log), v0.Raw, v0.Options{}, fold.Apply)
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := dshrecovery.Decide(res, &fold, "s1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cut at", plan.Cut, "then append:")
	for _, c := range plan.Closers {
		line := string(c.Line)
		if i := strings.Index(line, `"error"`); i > 0 && c.Type == "tool/result" {
			line = line[i:]
		}
		fmt.Println(c.Seq, c.Type, line)
	}
	// Output:
	// cut at 574 then append:
	// 4 tool/result "error":{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}},"surfaceOp":"append","sourceEventSeqs":[3]}
	// 5 step/end {"type":"step/end","seq":5,"time":13,"data":{"turn":1,"step":1}}
	// 6 turn/end {"type":"turn/end","seq":6,"time":13,"data":{"turn":1,"reason":{"kind":"interrupted"}}}
}
