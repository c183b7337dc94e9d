package bus

import (
	"encoding/json"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
)

// Decision is what the recovery service publishes for one session: the
// decision document (tailproof's one published JSON shape, that of
// `tailproof reconcile --json`; opaque to the transport) and the terminal
// records it appended, one per prompt it settled.
type Decision struct {
	Document  json.RawMessage
	Terminals []Terminal
}

// Terminal is one appended ledger record and the prompt it settles.
type Terminal struct {
	Target string
	Line   []byte
}

// Default topics of the recovery service.
const (
	TopicLoad     = "tailproof.session.load"
	TopicDecision = "tailproof.decision"
	TopicTerminal = "tailproof.terminal"
	TopicPoison   = "tailproof.poison"
)

// Sink publishes decisions and the terminal records they appended.
type Sink struct {
	Pub           message.Publisher
	DecisionTopic string // "": TopicDecision
	TerminalTopic string // "": TopicTerminal
}

// Messages builds the messages for one decision: the decision document and,
// per appended record, that record line on the terminal topic. A
// terminal's uuid is "<session>/<target>": a prompt has one terminal, so a
// transport that deduplicates by id (JetStream with Nats-Msg-Id) drops a
// republished one.
func (s Sink) Messages(session string, d Decision) (decision *message.Message, terminals []*message.Message, err error) {
	if !json.Valid(d.Document) {
		return nil, nil, fmt.Errorf("bus: decision for %s: the document is not JSON", session)
	}
	decision = message.NewMessage(watermill.NewUUID(), append([]byte(nil), d.Document...))
	decision.Metadata.Set(MetaSession, session)
	for _, t := range d.Terminals {
		tm := message.NewMessage(session+"/"+t.Target, append([]byte(nil), t.Line...))
		tm.Metadata.Set(MetaSession, session)
		tm.Metadata.Set(MetaStream, "ledger")
		terminals = append(terminals, tm)
	}
	return decision, terminals, nil
}

// Publish publishes d (and its terminal records) for session.
func (s Sink) Publish(session string, d Decision) error {
	dm, tms, err := s.Messages(session, d)
	if err != nil {
		return err
	}
	return s.publish(s.Pub, session, dm, tms)
}

func (s Sink) publish(pub message.Publisher, session string, dm *message.Message, tms []*message.Message) error {
	if err := pub.Publish(or(s.DecisionTopic, TopicDecision), dm); err != nil {
		return fmt.Errorf("bus: publish decision for %s: %w", session, err)
	}
	for _, tm := range tms {
		if err := pub.Publish(or(s.TerminalTopic, TopicTerminal), tm); err != nil {
			return fmt.Errorf("bus: publish terminal for %s: %w", session, err)
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
