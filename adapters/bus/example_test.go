package bus_test

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/events"
)

// ledgerLines is what a harness already has in hand: a session's ledger lines.
type ledgerLines []string

// Subscribe is the whole plug-in: one record line per message, stream,
// session and position in the metadata, the next line only after Ack.
func (s ledgerLines) Subscribe(ctx context.Context, session string) (<-chan *message.Message, error) {
	out := make(chan *message.Message)
	go func() {
		defer close(out)
		var off int64
		for i, line := range s {
			m := bus.NewRecordMessage(fmt.Sprint(session, ":", off), events.StreamLedger, session, events.Position{Line: i + 1, Offset: off}, []byte(line))
			off += int64(len(line)) + 1
			select {
			case out <- m:
			case <-ctx.Done():
				return
			}
			select {
			case <-m.Acked():
			case <-m.Nacked(): // a real source would resend; this one stops
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (ledgerLines) Close() error { return nil }

// A harness author plugs in their own source: anything implementing
// watermill's message.Subscriber. Source types its lines with the built-in
// codecs. (A source is accepted when it passes watermill's universal suite,
// as TestTailerUniversal runs it for the Tailer.)
func Example_ownSource() {
	src := bus.NewSource(ledgerLines{
		`{"v":1,"promptId":"p1","state":"in_flight","at":1767225600500}`,
		`{"v":1,"promptId":"p1","terminal":"completed","stopReason":"end_turn","at":1767225601000}`,
	})
	deliveries, err := src.Subscribe(context.Background(), "session-1")
	if err != nil {
		panic(err)
	}
	for d := range deliveries {
		if d.Err != nil {
			fmt.Println(d.Err)
		}
		for _, e := range d.Events {
			fmt.Println(d.Session, e.Describe())
		}
		d.Msg.Ack()
	}
	// Output:
	// session-1 ledger:1 ledger.in_flight t=1767225600500 IF p1 at=1767225600500
	// session-1 ledger:2 ledger.terminal t=1767225601000 TERM p1 completed stopReason=end_turn at=1767225601000
}
