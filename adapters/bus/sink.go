package bus

import (
	"encoding/json"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
)

// Decision is what the recovery service publishes: the JSON shape of
// `tailproof reconcile --json`, so a consumer reads the bus and the CLI the
// same way. Target is null when no prompt was dangling; Appended is the
// ledger record appended (null when nothing was).
type Decision struct {
	Target   *string         `json:"target"`
	Verdict  string          `json:"verdict"`
	Appended json.RawMessage `json:"appended"`
	Vetoes   []Veto          `json:"vetoes"`
	// DryRun marks a decision made without appending: Appended is then what
	// would have been appended, and no terminal is published.
	DryRun bool `json:"dry_run,omitempty"`
}

// Veto is one guard's refusal.
type Veto struct {
	Guard  string `json:"guard"`
	Reason string `json:"reason"`
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

// Messages builds the messages for one decision: the decision itself and,
// when a record was appended, that record line on the terminal topic. The
// terminal's uuid is "<session>/<target>": a prompt has one terminal, so a
// transport that deduplicates by id (JetStream with Nats-Msg-Id) drops a
// republished one.
func (s Sink) Messages(session string, d Decision) (decision, terminal *message.Message, err error) {
	if d.Vetoes == nil {
		d.Vetoes = []Veto{}
	}
	if d.Appended == nil {
		d.Appended = json.RawMessage("null")
	}
	body, err := json.Marshal(d)
	if err != nil {
		return nil, nil, fmt.Errorf("bus: encode decision for %s: %w", session, err)
	}
	decision = message.NewMessage(watermill.NewUUID(), body)
	decision.Metadata.Set(MetaSession, session)
	if d.Target != nil && !d.DryRun && string(d.Appended) != "null" {
		terminal = message.NewMessage(session+"/"+*d.Target, append([]byte(nil), d.Appended...))
		terminal.Metadata.Set(MetaSession, session)
		terminal.Metadata.Set(MetaStream, "ledger")
	}
	return decision, terminal, nil
}

// Publish publishes d (and its terminal record) for session.
func (s Sink) Publish(session string, d Decision) error {
	dm, tm, err := s.Messages(session, d)
	if err != nil {
		return err
	}
	if err := s.Pub.Publish(or(s.DecisionTopic, TopicDecision), dm); err != nil {
		return fmt.Errorf("bus: publish decision for %s: %w", session, err)
	}
	if tm != nil {
		if err := s.Pub.Publish(or(s.TerminalTopic, TopicTerminal), tm); err != nil {
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
