package codex_test

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// Decide the turns of a rollout whose writer died mid tool call.
func ExampleHarness() {
	rollout := `{"timestamp":"2026-11-30T09:00:01.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}
{"timestamp":"2026-11-30T09:00:01.003Z","type":"event_msg","payload":{"type":"user_message","message":"delete the build cache"}}
{"timestamp":"2026-11-30T09:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}
`
	ds, err := turnverdict.DecideAll(turn.Read(strings.NewReader(rollout), codex.Harness()),
		turnverdict.Options{WriterStopped: true})
	if err != nil {
		panic(err)
	}
	d := ds[len(ds)-1]
	fmt.Println(d.Turn, d.Verdict, d.Because)
	fmt.Printf("resend %q; dangling %s\n", d.Resend[0].Text, d.Dangling[0].ID)
	// Output:
	// t1 interrupted unfinished-work
	// resend "delete the build cache"; dangling c1
}
