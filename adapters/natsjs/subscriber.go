package natsjs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wjs "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/jetstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	// Group names a durable consumer shared by every subscriber in the group:
	// each message goes to one member. "" gives each Subscribe its own
	// ephemeral consumer that reads the stream from its start.
	Group string
	// AckWait is how long the server waits for an ack before redelivering to
	// another member (default 30s).
	AckWait time.Duration
	// NakDelay delays a Nacked message's redelivery (default 100ms), so a
	// session whose lease is held elsewhere is not retried in a hot loop.
	NakDelay time.Duration
	// Replicas for streams the subscriber creates on demand (default 1).
	Replicas int
	Logger   watermill.LoggerAdapter
}

// Subscriber is a watermill Subscriber over a JetStream pull consumer, with
// exactly one message in flight per consumer (MaxAckPending 1): a topic is
// processed strictly in order across the whole group, which is what makes
// a partition an ordering unit.
//
// It is ours rather than watermill-nats' jetstream.Subscriber because that
// one (v2.1.3) closes its output channel from a monitor goroutine while a
// callback may still be selecting on a send to it, a send-on-closed-channel
// panic at shutdown. Here the goroutine that sends is the one that closes.
// Messages use watermill-nats' wire format, so its Publisher is the writer.
type Subscriber struct {
	js        jetstream.JetStream
	cfg       SubscriberConfig
	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	mu        sync.Mutex
	closed    bool
}

// NewSubscriber returns a Subscriber on nc. The caller owns nc.
func NewSubscriber(nc *nats.Conn, cfg SubscriberConfig) (*Subscriber, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("natsjs: %w", err)
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.NakDelay <= 0 {
		cfg.NakDelay = 100 * time.Millisecond
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = watermill.NopLogger{}
	}
	return &Subscriber{js: js, cfg: cfg, closing: make(chan struct{})}, nil
}

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("natsjs: subscriber closed")

// SubscribeInitialize creates topic's stream if it is missing.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ensureStream(ctx, s.js, topic, s.cfg.Replicas)
}

func ensureStream(ctx context.Context, js jetstream.JetStream, topic string, replicas int) error {
	if _, err := js.Stream(ctx, topic); err == nil {
		return nil
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: topic, Subjects: []string{topic}, Storage: jetstream.FileStorage, Replicas: replicas,
	})
	if err != nil {
		return fmt.Errorf("natsjs: create stream %s: %w", topic, err)
	}
	return nil
}

// Subscribe consumes topic. It returns at once: the stream (created if
// missing) and the consumer are set up by the goroutine that feeds the
// channel, each attempt bounded by setupTimeout whatever ctx's deadline,
// and a failed attempt is retried with bounded backoff until one succeeds,
// ctx ends or the subscriber closes. A topic that is not a valid name is
// logged and its channel closed. Publishing right after Subscribe needs the
// stream first: SubscribeInitialize or Topology.Provision.
//
// Why: in a cluster whose node just died, a setup request can fail or get
// no reply until ctx ends. A watermill router treats a Subscribe error as
// fatal (Run returns, its remaining handlers never start, and Close waits
// its whole CloseTimeout for them) and subscribes its handlers one after
// another, so a blocked Subscribe stalls the rest (docs/bus.md, "A node
// dying while a worker subscribes").
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	out := make(chan *message.Message)
	runCtx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-runCtx.Done():
		case <-s.closing:
		}
		cancel()
	}()
	go func() {
		defer s.wg.Done()
		defer close(out)
		defer cancel()
		it := s.setup(runCtx, topic)
		if it == nil {
			return
		}
		defer it.Stop()
		s.loop(runCtx, topic, it, out)
	}()
	return out, nil
}

// setupTimeout bounds one setup attempt (JetStream's default API timeout,
// which applies only when the caller's context has no deadline). Between
// failed attempts the wait doubles from retryMin up to retryMax.
const (
	setupTimeout = 5 * time.Second
	retryMin     = 50 * time.Millisecond
	retryMax     = 2 * time.Second
)

// setup opens topic, retrying until it succeeds (the iterator), or ctx ends
// or the error is permanent (nil).
func (s *Subscriber) setup(ctx context.Context, topic string) jetstream.MessagesContext {
	log := s.cfg.Logger.With(watermill.LogFields{"topic": topic})
	wait := retryMin
	for attempt := 1; ; attempt++ {
		actx, acancel := context.WithTimeout(ctx, setupTimeout)
		it, err := s.open(actx, topic)
		acancel()
		switch {
		case err == nil:
			if attempt > 1 {
				log.Info("consumer set up after retries", watermill.LogFields{"attempts": attempt})
			}
			return it
		case ctx.Err() != nil:
			return nil
		case permanent(err):
			log.Error("cannot subscribe", err, nil)
			return nil
		}
		log.Error("consumer setup failed; retrying", err, watermill.LogFields{"attempt": attempt, "backoff": wait.String()})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// open ensures topic's stream and the consumer, and starts pulling from it.
func (s *Subscriber) open(ctx context.Context, topic string) (jetstream.MessagesContext, error) {
	if err := ensureStream(ctx, s.js, topic, s.cfg.Replicas); err != nil {
		return nil, err
	}
	cc := jetstream.ConsumerConfig{
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.cfg.AckWait,
		MaxAckPending: 1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if s.cfg.Group != "" {
		cc.Durable = s.cfg.Group
	} else {
		cc.InactiveThreshold = time.Minute
	}
	cons, err := s.js.CreateOrUpdateConsumer(ctx, topic, cc)
	if err != nil {
		return nil, fmt.Errorf("natsjs: consumer on %s: %w", topic, err)
	}
	// Short pull requests with frequent heartbeats: when the server holding
	// a pull dies, the client notices within a second and pulls again from
	// whichever server now leads the consumer, instead of waiting out the
	// default 30s expiry.
	it, err := cons.Messages(jetstream.PullMaxMessages(1), jetstream.PullExpiry(2*time.Second), jetstream.PullHeartbeat(500*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("natsjs: consume %s: %w", topic, err)
	}
	return it, nil
}

// permanent reports whether a setup error cannot go away by retrying: the
// topic is not a valid stream or subject name.
func permanent(err error) bool {
	return errors.Is(err, jetstream.ErrInvalidStreamName) || errors.Is(err, jetstream.ErrStreamNameRequired) ||
		errors.Is(err, jetstream.ErrInvalidSubject) || errors.Is(err, jetstream.ErrInvalidConsumerName)
}

func (s *Subscriber) loop(ctx context.Context, topic string, it jetstream.MessagesContext, out chan<- *message.Message) {
	log := s.cfg.Logger.With(watermill.LogFields{"topic": topic})
	for {
		jm, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return
			}
			log.Debug("next failed; retrying", watermill.LogFields{"err": err.Error()})
			continue
		}
		wm, err := wjs.DefaultUnmarshaler{}.Unmarshal(jm)
		if err != nil {
			// A message that is not in watermill's wire format can never be
			// delivered: terminate it rather than redeliver it forever.
			log.Error("undecodable message terminated", err, nil)
			_ = jm.Term()
			continue
		}
		mctx, mcancel := context.WithCancel(ctx)
		wm.SetContext(mctx)
		select {
		case out <- wm:
		case <-ctx.Done():
			mcancel()
			_ = jm.Nak()
			return
		}
		select {
		case <-wm.Acked():
			actx, acancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := jm.DoubleAck(actx); err != nil {
				// The server did not confirm: it redelivers after AckWait.
				// Delivery is at-least-once; handlers are idempotent.
				log.Error("ack not confirmed", err, nil)
			}
			acancel()
		case <-wm.Nacked():
			_ = jm.NakWithDelay(s.cfg.NakDelay)
		case <-ctx.Done():
			_ = jm.Nak()
			mcancel()
			return
		}
		mcancel()
	}
}

// Close stops every subscription and waits for their channels to close.
func (s *Subscriber) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.closing)
	})
	s.wg.Wait()
	return nil
}

// Publisher is watermill-nats' JetStream publisher on a connection the caller
// owns: Close leaves the connection open.
type Publisher struct{ p *wjs.Publisher }

// NewPublisher returns a Publisher on nc. A Publish returns once the
// stream's leader acknowledged it (stored on a quorum of replicas).
func NewPublisher(nc *nats.Conn) (*Publisher, error) {
	p, err := wjs.NewPublisher(wjs.PublisherConfig{Conn: nc, Logger: watermill.NopLogger{}})
	if err != nil {
		return nil, fmt.Errorf("natsjs: %w", err)
	}
	return &Publisher{p: p}, nil
}

// Publish publishes msgs to topic's stream.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	return p.p.Publish(topic, msgs...)
}

// Close is a no-op: the connection belongs to the caller.
func (p *Publisher) Close() error { return nil }
