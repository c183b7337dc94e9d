package natsjs

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/guards"
)

// Topology names the streams and the lease bucket, and how sessions are
// partitioned. Every worker and publisher of one deployment uses the same.
type Topology struct {
	// Partitions is the number of load streams (default 8). A session always
	// maps to the same one; each is consumed one message at a time, so
	// parallelism is Partitions and a session's load events stay in order.
	Partitions int
	// Replicas of every stream and of the lease bucket (default 1; 3 on a
	// three-node cluster so one node can die).
	Replicas int
	// Prefix of stream and bucket names (default "tailproof").
	Prefix string
	// LeaseTTL is how long a dead worker's lease outlives it (default 10s).
	LeaseTTL time.Duration
}

func (t Topology) withDefaults() Topology {
	if t.Partitions <= 0 {
		t.Partitions = 8
	}
	if t.Replicas <= 0 {
		t.Replicas = 1
	}
	if t.Prefix == "" {
		t.Prefix = "tailproof"
	}
	if t.LeaseTTL <= 0 {
		t.LeaseTTL = 10 * time.Second
	}
	return t
}

// LoadTopic is the stream session's load events go to.
func (t Topology) LoadTopic(session string) string {
	t = t.withDefaults()
	h := fnv.New32a()
	h.Write([]byte(session))
	return t.loadTopic(int(h.Sum32() % uint32(t.Partitions)))
}

func (t Topology) loadTopic(p int) string { return fmt.Sprintf("%s-load-%d", t.Prefix, p) }

// LoadTopics lists every partition's stream.
func (t Topology) LoadTopics() []string {
	t = t.withDefaults()
	out := make([]string, t.Partitions)
	for i := range out {
		out[i] = t.loadTopic(i)
	}
	return out
}

// DecisionTopic, TerminalTopic and PoisonTopic are the output streams.
func (t Topology) DecisionTopic() string { return t.withDefaults().Prefix + "-decision" }
func (t Topology) TerminalTopic() string { return t.withDefaults().Prefix + "-terminal" }
func (t Topology) PoisonTopic() string   { return t.withDefaults().Prefix + "-poison" }

// LeaseBucket is the key-value bucket holding session leases.
func (t Topology) LeaseBucket() string { return t.withDefaults().Prefix + "-leases" }

// Provision creates every stream and the lease bucket (idempotent).
func (t Topology) Provision(ctx context.Context, nc *nats.Conn) error {
	t = t.withDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("natsjs: %w", err)
	}
	for _, topic := range append(t.LoadTopics(), t.DecisionTopic(), t.TerminalTopic(), t.PoisonTopic()) {
		if err := ensureStream(ctx, js, topic, t.Replicas); err != nil {
			return err
		}
	}
	_, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: t.LeaseBucket(), TTL: t.LeaseTTL, Replicas: t.Replicas, Storage: jetstream.FileStorage, History: 1,
	})
	if err != nil {
		return fmt.Errorf("natsjs: lease bucket: %w", err)
	}
	return nil
}

// PublishLoad publishes session's load event to its partition.
func (t Topology) PublishLoad(pub message.Publisher, session string) error {
	return pub.Publish(t.LoadTopic(session), bus.NewLoadMessage(session))
}

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Name     string // unique per worker: the lease owner
	Conn     *nats.Conn
	Topology Topology
	// Store is the sessions' shared storage; Decide decides one session on
	// it (in production tailproof.Reconcile, wired by the caller: the
	// transport does not know the decision core).
	Store  adapters.Store
	Decide Decider
	// AckWait before the server hands an unacked load event to another
	// worker (default 30s).
	AckWait time.Duration
	Logger  watermill.LoggerAdapter
}

// Worker decides sessions from the load partitions it is handed, one
// session at a time under that session's lease.
type Worker struct {
	cfg    WorkerConfig
	leases *Leases
	sub    *Subscriber
	svc    *bus.Service
	sink   bus.Sink
}

// NewWorker provisions the topology and wires the recovery service.
func NewWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	if cfg.Name == "" || cfg.Conn == nil || cfg.Store == nil || cfg.Decide == nil {
		return nil, errors.New("natsjs: WorkerConfig needs Name, Conn, Store and Decide")
	}
	cfg.Topology = cfg.Topology.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = watermill.NopLogger{}
	}
	if err := cfg.Topology.Provision(ctx, cfg.Conn); err != nil {
		return nil, err
	}
	js, err := jetstream.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("natsjs: %w", err)
	}
	leases, err := OpenLeases(ctx, js, cfg.Topology.LeaseBucket(), cfg.Name, cfg.Topology.LeaseTTL, cfg.Topology.Replicas)
	if err != nil {
		return nil, err
	}
	sub, err := NewSubscriber(cfg.Conn, SubscriberConfig{
		Group: cfg.Topology.Prefix + "-workers", AckWait: cfg.AckWait, Replicas: cfg.Topology.Replicas, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	pub, err := NewPublisher(cfg.Conn)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, leases: leases, sub: sub,
		sink: bus.Sink{Pub: pub, DecisionTopic: cfg.Topology.DecisionTopic(), TerminalTopic: cfg.Topology.TerminalTopic()}}
	w.svc, err = bus.NewService(bus.ServiceConfig{
		Subscriber: sub, Publisher: pub,
		LoadTopics:    cfg.Topology.LoadTopics(),
		DecisionTopic: cfg.Topology.DecisionTopic(),
		TerminalTopic: cfg.Topology.TerminalTopic(),
		PoisonTopic:   cfg.Topology.PoisonTopic(),
		Decide:        w.decide,
		Logger:        cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Run runs the worker until ctx is cancelled or Close is called.
func (w *Worker) Run(ctx context.Context) error { return w.svc.Run(ctx) }

// Running is closed once the worker has a handler on every partition. A
// partition's consumer is set up by its subscription and may still be
// (retrying after a transient cluster error); load events published before
// it exists are delivered once it does (durable consumer, DeliverAll).
func (w *Worker) Running() chan struct{} { return w.svc.Running() }

// Close stops the worker, waiting for the decision in progress.
func (w *Worker) Close() error {
	// Closing the subscriber first ends every handler's message channel, so
	// the router has nothing left to wait for but the decision in progress.
	err := w.sub.Close()
	return errors.Join(err, w.svc.Close())
}

// Decider decides session on store — the shared store seen through the
// session's lease, whose AppendLedger re-checks the lease right before
// writing — running extra (the lease guard) after its own evidence guards.
// It returns the published decision and every veto of the decision, so the
// worker sees its lease guard's.
type Decider func(ctx context.Context, store adapters.Store, session string, extra guards.Guard[*guards.Evidence]) (bus.Decision, []guards.Veto, error)

// Decide decides session under a freshly acquired lease (what the worker
// does for each load event). A lease held elsewhere, or lost before the
// append, is returned as an error wrapping bus.ErrRequeue: the session is
// not decided here and its load event goes back for redelivery.
func (w *Worker) Decide(ctx context.Context, session string) (bus.Decision, error) {
	lease, err := w.leases.Acquire(ctx, session)
	if err != nil {
		return bus.Decision{}, errors.Join(bus.ErrRequeue, err)
	}
	defer lease.Release(context.WithoutCancel(ctx))
	return DecideUnder(ctx, lease, w.cfg.Store, session, w.cfg.Decide)
}

// DecideUnder runs decide on session holding lease: the lease guard joins
// the decision's guards (a lost lease vetoes, visibly, in the decision) and
// the store's AppendLedger re-checks the lease right before writing.
func DecideUnder(ctx context.Context, lease *Lease, store adapters.Store, session string, decide Decider) (bus.Decision, error) {
	d, vetoes, err := decide(ctx, lease.Store(store), session, lease.Guard(ctx))
	if err != nil {
		if errors.Is(err, ErrLeaseLost) {
			err = errors.Join(bus.ErrRequeue, err)
		}
		return d, err
	}
	for _, v := range vetoes {
		if v.Guard == LeaseGuardName {
			return d, errors.Join(bus.ErrRequeue, fmt.Errorf("natsjs: session %s: %w: %s", session, ErrLeaseLost, v.Reason))
		}
	}
	return d, nil
}

func (w *Worker) decide(ctx context.Context, session string) (bus.Decision, error) {
	d, err := w.Decide(ctx, session)
	if err != nil && errors.Is(err, ErrLeaseLost) && d.Document != nil {
		// Say publicly that this worker stopped, then hand the session back.
		_ = w.sink.Publish(session, d)
	}
	if err != nil {
		return bus.Decision{}, err
	}
	return d, nil
}
