package claude_test

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// A turn_duration after a user interrupt is not a completion.
func ExampleHarness() {
	transcript := `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"refactor it"},"uuid":"u1","promptId":"p1","origin":{"kind":"human"}}
{"parentUuid":"u1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"uuid":"i1","interruptedMessageId":"msg_1"}
{"parentUuid":"i1","isSidechain":false,"type":"system","subtype":"turn_duration","durationMs":900,"messageCount":2,"uuid":"d1"}
`
	ds, err := turnverdict.DecideAll(turn.Read(strings.NewReader(transcript), claude.Harness()),
		turnverdict.Options{WriterStopped: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(ds[0].Turn, ds[0].Verdict, ds[0].Because, ds[0].HarnessEnd)
	// Output:
	// p1 interrupted interrupt-marker unstated
}
