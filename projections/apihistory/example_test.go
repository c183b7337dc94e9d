package apihistory_test

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
)

// Fold a transcript as it streams; every entry remembers the records and
// provenance it came from.
func ExampleFold() {
	transcript := strings.Join([]string{
		`{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/w","version":"1","promptId":"p1","message":{"role":"user","parts":[{"text":"list the files"}]}}`,
		`{"uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/w","version":"1","message":{"role":"model","parts":[{"functionCall":{"id":"call-1","name":"ls","args":{}}}]}}`,
		`{"uuid":"n1","parentUuid":"a1","sessionId":"S","timestamp":"2026-01-01T00:00:03.000Z","type":"user","subtype":"notification","provenance":"system","cwd":"/w","version":"1","message":{"role":"user","parts":[{"text":"<task-notification><status>completed</status></task-notification>"}]}}`,
	}, "\n")
	f := apihistory.New(apihistory.Options{})
	for ev, err := range events.Decode(strings.NewReader(transcript), qwen.Codec{}, events.Options{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := f.Add(ev); err != nil {
			fmt.Println(err)
			return
		}
	}
	res := f.Result()
	for _, e := range res.Tail {
		fmt.Println(e.Describe())
	}
	fmt.Println("total", res.Total, "trailing cold notifications", res.TrailingSystemNotifications)
	// Output:
	// user["list the files"] promptId=p1 <- u1(real_user)
	// model[fc(call-1 ls)] <- a1(assistant_output)
	// user["<task-notification><status>completed</status></task-notification>"] cold <- n1(system)
	// total 3 trailing cold notifications 1
}
