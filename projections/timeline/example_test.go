package timeline_test

import (
	"fmt"

	"github.com/tailproof/tailproof/projections/timeline"
)

func Example() {
	ledgerData := []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1000}` + "\n")
	transcript := []byte(`{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"1970-01-01T00:00:01.001Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"run the tests"}]},"daemonPromptId":"p1"}` + "\n" +
		`{"uuid":"u2","parentUuid":"u1","sessionId":"s","timestamp":"1970-01-01T00:00:01.002Z","type":"assistant","provenance":"assistant_output","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"run_shell_command","args":{}}}]}}` + "\n")
	ev, err := timeline.QwenEvidence(ledgerData, transcript, 0)
	if err != nil {
		panic(err)
	}
	tl := timeline.New()
	for i := range ev.Len() {
		tl.Add(ev.Event(i))
	}
	fmt.Print(tl.Describe())
	cut := ev.Cut(2)
	fmt.Printf("crash after event 2 keeps the whole ledger: %v, the first transcript line: %q\n",
		string(cut[0]) == string(ledgerData), cut[1][len(cut[1])-23:])
	// Output:
	// #1 admission ledger:1 t=1000 prompt=p1 "admitted"
	// #2 prompt transcript:1 t=1001 prompt=p1 ref=u1 prov=real_user "run the tests"
	// #3 tool_call transcript:2 t=1002 ref=c1 prov=assistant_output "run_shell_command"
	// crash after event 2 keeps the whole ledger: true, the first transcript line: "\"daemonPromptId\":\"p1\"}\n"
}
