package turn_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// tinyRecord is the native record of a made-up harness whose log lines are
// "<verb> [args…]": ask, note, say, call, result, done.
type tinyRecord struct{ verb, arg string }

func (r tinyRecord) Describe() string { return r.verb + " " + r.arg }

// tinyCodec decodes one line into one tinyRecord.
type tinyCodec struct{}

func (tinyCodec) Name() string          { return "tiny" }
func (tinyCodec) Stream() events.Stream { return "tiny" }
func (tinyCodec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	verb, arg, _ := strings.Cut(string(line.Bytes), " ")
	switch verb {
	case "ask", "note", "say", "call", "result", "done":
		return append(dst, events.Event{Stream: "tiny", Pos: line.Pos, Kind: events.Kind("tiny." + verb),
			Body: tinyRecord{verb, arg}}), nil
	}
	return dst, errors.New("tiny: not a record")
}

// tinyActs maps a tinyRecord onto the vocabulary.
func tinyActs(dst []turn.Act, ev events.Event) []turn.Act {
	r := ev.Body.(tinyRecord)
	a := turn.Act{Pos: ev.Pos, Native: ev.Kind}
	switch r.verb {
	case "ask":
		a.Kind, a.Source, a.Origin, a.Text = turn.KindPrompt, turn.SourceUser, events.OriginStructural, r.arg
	case "note": // the harness's own reminders to the model: never resent
		a.Kind, a.Source, a.Origin, a.Text = turn.KindPrompt, turn.SourceInjected, events.OriginStructural, r.arg
	case "say":
		a.Kind, a.Stop = turn.KindOutput, turn.StopFinal
	case "call":
		a.Kind, a.Call = turn.KindToolCall, r.arg
	case "result":
		a.Kind, a.Call = turn.KindToolResult, r.arg
	case "done":
		a.Kind, a.End = turn.KindTurnEnd, turn.EndCompleted
	}
	return append(dst, a)
}

// A harness of your own, end to end: its bytes, its codec and mapper, the
// shared vocabulary, and tailproof's verdict on every turn — nothing in
// tailproof was edited. The second turn was cut by a crash while a tool
// call ran, and the last line is a torn fragment.
func Example_customHarness() {
	log := "ask list the files\nsay two files\ndone\n" +
		"ask now delete the old one\nnote the user is on a read-only volume\ncall c1\nres"
	tiny := turn.Harness{Name: "tiny", Codec: tinyCodec{}, Mapper: turn.MapperFunc(tinyActs)}

	decisions, err := turnverdict.DecideAll(turn.Read(strings.NewReader(log), tiny),
		turnverdict.Options{WriterStopped: true})
	if err != nil {
		panic(err)
	}
	for _, d := range decisions {
		fmt.Print(d.Describe())
	}
	// Output:
	// turn 1 line:1 (line 1, offset 0 .. line 3): completed by completion-recorded; harness end completed
	// turn 2 line:4 (line 4, offset 38 .. line 6): interrupted by unfinished-work
	//   resend line 4, offset 38 "now delete the old one"
	//   dangling c1  (may have run)
	//   note torn final fragment at line 7, offset 112 discarded
}
