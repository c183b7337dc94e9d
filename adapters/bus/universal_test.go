package bus_test

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"

	"github.com/tailproof/tailproof/adapters/bus"
)

// TestTailerUniversal runs watermill's universal Pub/Sub suite — the suite
// every official adapter runs — against the Tailer, with the Appender as the
// writing side. The envelope codec carries message identity through the file
// because the suite checks uuids; the following, acking, closing and ordering
// machinery under test is the one session files use. Features are declared
// as they are: no consumer groups, at-least-once, ordered, persistent, and a
// new subscriber reads the file from the start.
func TestTailerUniversal(t *testing.T) {
	// One directory for the whole suite: it builds several pub/subs that
	// must see each other's topics (topics are random, so nothing collides).
	dir := t.TempDir()
	tests.TestPubSub(t,
		tests.Features{
			ConsumerGroups:                   false,
			ExactlyOnceDelivery:              false,
			GuaranteedOrder:                  true,
			Persistent:                       true,
			NewSubscriberReceivesOldMessages: true,
		},
		func(t *testing.T) (message.Publisher, message.Subscriber) {
			return &bus.Appender{Dir: dir, Marshal: bus.EnvelopeMarshal},
				bus.NewTailer(bus.TailConfig{Dir: dir, Unmarshal: bus.EnvelopeUnmarshal, PollInterval: 5 * time.Millisecond})
		},
		nil,
	)
}
