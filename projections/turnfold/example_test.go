package turnfold_test

import (
	"fmt"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// Fold acts into turns: a turn is handed back when the next one opens, the
// last at Finish.
func ExampleFold() {
	acts := []turn.Act{
		{Kind: turn.KindTurnStart, Turn: "t1"},
		{Kind: turn.KindPrompt, Source: turn.SourceUser, Origin: events.OriginCarried, Text: "list the files"},
		{Kind: turn.KindToolCall, Call: "c1", Name: "shell"},
		{Kind: turn.KindTurnStart, Turn: "t2"},
		{Kind: turn.KindPrompt, Source: turn.SourceUser, Origin: events.OriginCarried, Text: "continue"},
	}
	f := turnfold.New()
	for i, a := range acts {
		a.Pos = events.Position{Line: i + 1}
		if t := f.Add(a); t != nil {
			fmt.Println(t.Key(), "closed; dangling:", t.Dangling()[0].ID, "last progress:", t.LastProgress)
		}
	}
	last := f.Finish()
	fmt.Println(last.Key(), "open; prompts:", len(last.Prompts), "has end:", last.HasEnd)
	// Output:
	// t1 closed; dangling: c1 last progress: tool-call
	// t2 open; prompts: 1 has end: false
}
