package dsh_test

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
)

func Example() {
	log := `{"type":"session","version":1,"id":"s1","createdAt":1000,"cwd":"/w"}
{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}
{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}}
{"type":"assistant/chunk","seq":2,"ti`
	for ev, err := range events.Decode(strings.NewReader(log), dsh.Codec{}, events.Options{RequireNewline: true}) {
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(ev.Describe())
	}
	// A record built from a typed payload is written with dsh's key order.
	fmt.Printf("%s\n", dsh.AppendRecord(nil, dsh.NewRecord(3, 9, &dsh.TurnEnd{Turn: 1, Reason: dsh.Reason{Kind: "interrupted"}})))
	// Output:
	// session_log:1 dsh.session t=1000 session version=1 id="s1" createdAt=1000 cwd="/w"
	// session_log:2 dsh.turn/start t=1 seq=0 turn=1 trigger=message/user
	// session_log:3 dsh.user/message t=2 prov=real_user seq=1 source=user content=[text "hi"]
	// events: session_log line 4, offset 295: torn tail: final fragment has no newline
	// {"type":"turn/end","seq":3,"time":9,"data":{"turn":1,"reason":{"kind":"interrupted"}}}
}
