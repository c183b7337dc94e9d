package events_test

import (
	"errors"
	"fmt"

	"github.com/tailproof/tailproof/events"
)

// A reader of its own format classifies bad lines exactly as Decode does.
func ExampleClassifier() {
	var c events.Classifier
	c.Hold(&events.Error{Stream: "demo", Pos: events.Position{Line: 2}})
	for _, e := range c.Valid() { // line 3 decoded: line 2 was damage in the middle
		fmt.Println(e.Pos.Line, errors.Is(e, events.ErrCorrupt))
	}
	c.Hold(&events.Error{Stream: "demo", Pos: events.Position{Line: 9}})
	for _, e := range c.End() { // nothing valid after line 9: a torn tail
		fmt.Println(e.Pos.Line, errors.Is(e, events.ErrTornTail))
	}
	// Output:
	// 2 true
	// 9 true
}
