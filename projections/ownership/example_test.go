package ownership_test

import (
	"fmt"

	"github.com/tailproof/tailproof/projections/ownership"
)

func ExampleState() {
	var s ownership.State
	for _, line := range []string{
		"foreground_prompt start p1",
		"foreground_prompt streamed p1",
		"notification_turn start task-3",
	} {
		ev, err := ownership.ParseEvent(line)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := s.Apply(ev); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("owner:", s.Owner().Describe())
	fmt.Println("all:", s.Describe())
	_ = s.Apply(ownership.Event{Class: ownership.Foreground, Phase: ownership.Settle, Turn: "p1"})
	_ = s.Apply(ownership.Event{Class: ownership.Notification, Phase: ownership.Settle, Turn: "task-3"})
	fmt.Println("free:", s.Free())
	// Output:
	// owner: settling_prompt p1
	// all: settling_prompt p1, notification_turn task-3
	// free: true
}
