package bus

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
)

// DefaultCodecs returns the built-in codecs: the Qwen ledger, the Qwen
// transcript and the dsh session log.
func DefaultCodecs() *events.Registry {
	return events.NewRegistry(ledger.Codec{}, qwen.Codec{}, dsh.Codec{})
}

// Source turns the messages of any watermill Subscriber topic into typed
// events. The subscriber is the plug-in point: tailproof's own Tailer, a
// JetStream subscription, or a harness author's own; it only has to put one
// record line in the payload and stream, session and position in the
// metadata (see NewRecordMessage).
type Source struct {
	Sub    message.Subscriber
	Codecs *events.Registry // nil: DefaultCodecs()
	// MaxLineBytes bounds a payload (<= 0: events.DefaultMaxLineBytes).
	MaxLineBytes int
}

// Delivery is one received message with its decoded events. The receiver owns
// Msg and must Ack it (or Nack to have it redelivered) before the next
// delivery arrives from an ordered subscriber.
type Delivery struct {
	Msg     *message.Message
	Session string
	Events  []events.Event
	// Err is set (wrapping ErrBadMessage) when the message could not be
	// typed; Events is then whatever decoded before the failure.
	Err error
}

// NewSource returns a Source over sub with the built-in codecs.
func NewSource(sub message.Subscriber) *Source { return &Source{Sub: sub} }

// Subscribe subscribes to topic and types each message. The returned channel
// closes when the subscriber's channel closes.
func (s *Source) Subscribe(ctx context.Context, topic string) (<-chan Delivery, error) {
	in, err := s.Sub.Subscribe(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("bus: subscribe %q: %w", topic, err)
	}
	out := make(chan Delivery)
	go func() {
		defer close(out)
		for m := range in {
			evs, err := s.Decode(m)
			d := Delivery{Msg: m, Session: m.Metadata.Get(MetaSession), Events: evs, Err: err}
			select {
			case out <- d:
			case <-ctx.Done():
				m.Nack()
				return
			}
		}
	}()
	return out, nil
}

// Decode types one message: the codec named by MetaCodec, else the codec of
// the registry whose stream is MetaStream.
func (s *Source) Decode(m *message.Message) ([]events.Event, error) {
	reg := s.Codecs
	if reg == nil {
		reg = DefaultCodecs()
	}
	stream := events.Stream(m.Metadata.Get(MetaStream))
	var codec events.Codec
	if name := m.Metadata.Get(MetaCodec); name != "" {
		c, ok := reg.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("bus: message %s: no codec %q: %w", m.UUID, name, ErrBadMessage)
		}
		codec = c
	} else {
		for _, name := range reg.Names() {
			if c, _ := reg.Lookup(name); c != nil && c.Stream() == stream {
				codec = c
				break
			}
		}
		if codec == nil {
			return nil, fmt.Errorf("bus: message %s: no codec for stream %q: %w", m.UUID, stream, ErrBadMessage)
		}
	}
	pos, err := Position(m)
	if err != nil {
		return nil, fmt.Errorf("bus: message %s: %w", m.UUID, err)
	}
	max := s.MaxLineBytes
	if max <= 0 {
		max = events.DefaultMaxLineBytes
	}
	if len(m.Payload) > max {
		return nil, fmt.Errorf("bus: message %s: %s: payload of %d bytes: %w", m.UUID, pos, len(m.Payload), ErrBadMessage)
	}
	line := events.Line{Bytes: m.Payload, Pos: pos, Terminated: true, Size: int64(len(m.Payload))}
	evs, err := codec.DecodeLine(nil, line)
	if err != nil {
		return evs, fmt.Errorf("bus: message %s: %s: %w: %w", m.UUID, pos, ErrBadMessage, err)
	}
	return evs, nil
}
