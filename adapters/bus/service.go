package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// Decider decides one session: in production tailproof.Reconcile over a
// store (see Reconciler). It returns an error only when no decision could be
// made (an unreadable ledger, a failed append); the service retries those.
type Decider func(ctx context.Context, sessionID string) (Decision, error)

// ErrRequeue marks a Decider error that must not be poisoned: the session
// is not decided, and the load event goes back to the transport for
// redelivery (the JetStream worker uses it when another worker holds the
// session's lease, or when it lost its own before appending).
var ErrRequeue = errors.New("requeue")

// LoadEvent is the payload of a session-load event.
type LoadEvent struct {
	Session string `json:"session"`
}

// NewLoadMessage builds the session-load event for sessionID.
func NewLoadMessage(sessionID string) *message.Message {
	body, _ := json.Marshal(LoadEvent{Session: sessionID})
	m := message.NewMessage(watermill.NewUUID(), body)
	m.Metadata.Set(MetaSession, sessionID)
	return m
}

// SessionOf reads the session id of a load event: the JSON payload's
// "session", else the MetaSession metadata.
func SessionOf(m *message.Message) (string, error) {
	var ev LoadEvent
	if len(m.Payload) > 0 {
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			return "", fmt.Errorf("bus: load event %s: %w: %w", m.UUID, ErrBadMessage, err)
		}
	}
	if ev.Session == "" {
		ev.Session = m.Metadata.Get(MetaSession)
	}
	if ev.Session == "" {
		return "", fmt.Errorf("bus: load event %s names no session: %w", m.UUID, ErrBadMessage)
	}
	return ev.Session, nil
}

// ServiceConfig configures the recovery service.
type ServiceConfig struct {
	// Subscriber delivers session-load events; Publisher carries decisions,
	// terminals and poisoned events. Nil for both: an in-process gochannel
	// (NewInProcess).
	Subscriber message.Subscriber
	Publisher  message.Publisher
	// LoadTopics are the topics carrying session-load events (default
	// [TopicLoad]); one handler per topic, each ordered.
	LoadTopics    []string
	DecisionTopic string // default TopicDecision
	TerminalTopic string // default TopicTerminal
	PoisonTopic   string // default TopicPoison
	Decide        Decider
	// MaxRetries bounds the retries of a failing decision before it is
	// poisoned (default 3); backoff starts at RetryInterval (default 10ms).
	MaxRetries    int
	RetryInterval time.Duration
	Logger        watermill.LoggerAdapter
}

// Service is the recovery service: on each session-load event it decides the
// session and publishes the decision (and the terminal it appended).
type Service struct {
	cfg    ServiceConfig
	router *message.Router
	sink   Sink
}

// NewInProcess returns the embedded transport: a gochannel that blocks each
// publish until the subscriber acked it. Without the blocking, gochannel
// sends every message from its own goroutine and reorders them.
func NewInProcess(logger watermill.LoggerAdapter) *gochannel.GoChannel {
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	return gochannel.NewGoChannel(gochannel.Config{BlockPublishUntilSubscriberAck: true}, logger)
}

// NewService wires the router. Middleware order matters, first added is
// outermost:
//
//	PoisonQueue(filter: not ErrRequeue) → Retry → Recoverer → handler
//
// so a panic becomes an error (Recoverer), is retried with backoff (Retry),
// and only then parked on the poison topic and acked — the stream moves on
// instead of redelivering a poison message forever. ErrRequeue skips the
// poison queue: the router Nacks and the transport redelivers.
func NewService(cfg ServiceConfig) (*Service, error) {
	if cfg.Decide == nil {
		return nil, errors.New("bus: ServiceConfig.Decide is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = watermill.NopLogger{}
	}
	if cfg.Subscriber == nil && cfg.Publisher == nil {
		ch := NewInProcess(cfg.Logger)
		cfg.Subscriber, cfg.Publisher = ch, ch
	}
	if cfg.Subscriber == nil || cfg.Publisher == nil {
		return nil, errors.New("bus: ServiceConfig needs both Subscriber and Publisher, or neither")
	}
	if len(cfg.LoadTopics) == 0 {
		cfg.LoadTopics = []string{TopicLoad}
	}
	cfg.PoisonTopic = or(cfg.PoisonTopic, TopicPoison)
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 3
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = 10 * time.Millisecond
	}
	r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	poison, err := middleware.PoisonQueueWithFilter(cfg.Publisher, cfg.PoisonTopic, func(err error) bool {
		return !errors.Is(err, ErrRequeue)
	})
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	r.AddMiddleware(
		poison,
		middleware.Retry{
			MaxRetries:      cfg.MaxRetries,
			InitialInterval: cfg.RetryInterval,
			MaxInterval:     100 * cfg.RetryInterval,
			Multiplier:      2,
			MaxElapsedTime:  time.Minute,
			Logger:          cfg.Logger,
		}.Middleware,
		middleware.Recoverer,
	)
	s := &Service{cfg: cfg, router: r, sink: Sink{Pub: cfg.Publisher, DecisionTopic: cfg.DecisionTopic, TerminalTopic: cfg.TerminalTopic}}
	for _, topic := range cfg.LoadTopics {
		r.AddConsumerHandler("reconcile:"+topic, topic, cfg.Subscriber, s.handle)
	}
	return s, nil
}

func (s *Service) handle(m *message.Message) error {
	sid, err := SessionOf(m)
	if err != nil {
		return err // retried, then poisoned: it can never succeed
	}
	d, err := s.cfg.Decide(m.Context(), sid)
	if err != nil {
		if m.Context().Err() != nil {
			// The delivery was withdrawn (shutdown, lost connection): the
			// transport redelivers it, so it must not be poisoned.
			err = errors.Join(ErrRequeue, err)
		}
		return fmt.Errorf("bus: decide %s: %w", sid, err)
	}
	dm, tms, err := s.sink.Messages(sid, d)
	if err != nil {
		return err
	}
	dm.Metadata.Set(MetaCause, m.UUID)
	return s.sink.publish(s.cfg.Publisher, sid, dm, tms)
}

// Run runs the router until ctx is cancelled or Close is called.
func (s *Service) Run(ctx context.Context) error { return s.router.Run(ctx) }

// Running is closed once every handler is subscribed.
func (s *Service) Running() chan struct{} { return s.router.Running() }

// Close stops the router, waiting for in-flight decisions.
func (s *Service) Close() error { return s.router.Close() }

// Publisher is the transport's publisher (for load events on the in-process
// transport).
func (s *Service) Publisher() message.Publisher { return s.cfg.Publisher }

// Subscriber is the transport's subscriber (to read decisions on the
// in-process transport).
func (s *Service) Subscriber() message.Subscriber { return s.cfg.Subscriber }
