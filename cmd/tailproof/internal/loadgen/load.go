// Package loadgen is `tailproof loadtest`: it measures the recovery service
// (package service) under load — sessions with a prompt left in_flight
// receive load events through the in-process transport or an embedded
// JetStream server, and every decision is counted. It is CLI wiring only,
// which is why it lives under cmd/tailproof/internal.
package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/natsjs"
	"github.com/tailproof/tailproof/adapters/natsjs/natstest"
	"github.com/tailproof/tailproof/service"
)

// LoadConfig sizes a load run: Sessions sessions, each with one prompt left
// in_flight, receive Events load events each (interleaved across sessions);
// the first decides and appends, the rest decide none.
type LoadConfig struct {
	Sessions, Events int
	// Workers on the JetStream run (default 3), Partitions of the load
	// streams (default 8).
	Workers, Partitions int
	// Progress, when set, is called as load events are decided, with the
	// number decided and the number sent (Sessions × Events); calls may come
	// from any goroutine.
	Progress func(done, total int)
}

// LoadResult is one run's figures. Latency is from a load event's publish to
// the receipt of the decision it caused.
type LoadResult struct {
	Transport         string
	Decisions         int
	Appended          int
	Elapsed           time.Duration
	DecisionsPerSec   float64
	P50, P99, Max     time.Duration
	Sessions, PerSess int
}

func (r LoadResult) String() string {
	return fmt.Sprintf("%-10s sessions=%d events/session=%d decisions=%d appended=%d elapsed=%v decisions/s=%.0f p50=%v p99=%v max=%v",
		r.Transport, r.Sessions, r.PerSess, r.Decisions, r.Appended, r.Elapsed.Round(time.Millisecond), r.DecisionsPerSec,
		r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), r.Max.Round(10*time.Microsecond))
}

type tracker struct {
	mu       sync.Mutex
	sent     map[string]time.Time
	lat      []time.Duration
	appended int
	done     chan struct{}
	want     int
	progress func(done, total int)
}

func newTracker(want int, progress func(done, total int)) *tracker {
	return &tracker{sent: map[string]time.Time{}, done: make(chan struct{}), want: want, progress: progress}
}

func (t *tracker) publish(m *message.Message) {
	t.mu.Lock()
	t.sent[m.UUID] = time.Now()
	t.mu.Unlock()
}

func (t *tracker) decided(cause string, appended bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.sent[cause]
	if !ok {
		return // a redelivered load decided twice: counted once
	}
	delete(t.sent, cause)
	t.lat = append(t.lat, now.Sub(at))
	if appended {
		t.appended++
	}
	if t.progress != nil {
		t.progress(len(t.lat), t.want)
	}
	if len(t.lat) == t.want {
		close(t.done)
	}
}

func (t *tracker) result(name string, cfg LoadConfig, elapsed time.Duration) LoadResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	lat := slices.Clone(t.lat)
	slices.Sort(lat)
	r := LoadResult{Transport: name, Decisions: len(lat), Appended: t.appended, Elapsed: elapsed, Sessions: cfg.Sessions, PerSess: cfg.Events}
	if len(lat) > 0 {
		r.DecisionsPerSec = float64(len(lat)) / elapsed.Seconds()
		r.P50 = lat[len(lat)*50/100]
		r.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
		r.Max = lat[len(lat)-1]
	}
	return r
}

func seedLoad(ctx context.Context, cfg LoadConfig) (*memory.QwenStore, []string, error) {
	store := memory.NewQwenStore()
	ids := make([]string, cfg.Sessions)
	for i := range ids {
		ids[i] = bustest.SessionID(i)
		if err := bustest.Seed(ctx, store, ids[i], 3); err != nil {
			return nil, nil, err
		}
	}
	return store, ids, nil
}

var loadOpts = tailproof.Options{Now: func() int64 { return bustest.BaseMs + 60_000 }}

// RunInProcess runs the load through the embedded transport (one ordered
// gochannel topic, one service).
func RunInProcess(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	store, ids, err := seedLoad(ctx, cfg)
	if err != nil {
		return LoadResult{}, err
	}
	svc, err := bus.NewService(bus.ServiceConfig{Decide: service.Decider(store, loadOpts)})
	if err != nil {
		return LoadResult{}, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = svc.Run(rctx) }()
	<-svc.Running()
	defer svc.Close()
	tr := newTracker(cfg.Sessions*cfg.Events, cfg.Progress)
	decisions, err := svc.Subscriber().Subscribe(rctx, bus.TopicDecision)
	if err != nil {
		return LoadResult{}, err
	}
	go func() {
		for m := range decisions {
			tr.decided(m.Metadata.Get(bus.MetaCause), isAppended(m.Payload))
			m.Ack()
		}
	}()
	start := time.Now()
	go func() {
		for e := 0; e < cfg.Events; e++ {
			for _, id := range ids {
				m := bus.NewLoadMessage(id)
				tr.publish(m)
				if svc.Publisher().Publish(bus.TopicLoad, m) != nil {
					return
				}
			}
		}
	}()
	select {
	case <-tr.done:
	case <-ctx.Done():
		return tr.result("inprocess", cfg, time.Since(start)), ctx.Err()
	}
	return tr.result("inprocess", cfg, time.Since(start)), nil
}

func isAppended(payload []byte) bool {
	// The decision document has an "appended" member only when a record was
	// appended; a cheap check that avoids decoding every decision in the
	// measuring loop.
	return bytes.Contains(payload, []byte(`"appended":`))
}

// RunJetStream runs the load through an embedded single-node JetStream
// server on loopback with cfg.Workers workers (storage in a temp dir,
// removed after).
func RunJetStream(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 3
	}
	store, ids, err := seedLoad(ctx, cfg)
	if err != nil {
		return LoadResult{}, err
	}
	dir, err := os.MkdirTemp("", "tailproof-load-")
	if err != nil {
		return LoadResult{}, fmt.Errorf("loadgen: %w", err)
	}
	defer os.RemoveAll(dir)
	ns, err := natstest.StartServer(dir)
	if err != nil {
		return LoadResult{}, err
	}
	defer ns.Shutdown()
	topo := natsjs.Topology{Partitions: cfg.Partitions, Prefix: "load"}
	var conns []*nats.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	dial := func() (*nats.Conn, error) {
		c, err := nats.Connect(ns.ClientURL())
		if err == nil {
			conns = append(conns, c)
		}
		return c, err
	}
	ctl, err := dial()
	if err != nil {
		return LoadResult{}, err
	}
	if err := topo.Provision(ctx, ctl); err != nil {
		return LoadResult{}, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var workers []*natsjs.Worker
	for i := range cfg.Workers {
		c, err := dial()
		if err != nil {
			return LoadResult{}, err
		}
		w, err := natsjs.NewWorker(ctx, natsjs.WorkerConfig{Name: fmt.Sprintf("w%d", i), Conn: c, Topology: topo, Store: store, Decide: service.LeaseDecider(loadOpts)})
		if err != nil {
			return LoadResult{}, err
		}
		workers = append(workers, w)
		go func() { _ = w.Run(rctx) }()
		<-w.Running()
	}
	defer func() {
		for _, w := range workers {
			w.Close()
		}
	}()
	tr := newTracker(cfg.Sessions*cfg.Events, cfg.Progress)
	// Decisions are read with a plain subscription on the stream's subject:
	// every stored message is also delivered to core subscribers, without
	// an ack round trip per message in the measuring path.
	sub, err := ctl.Subscribe(topo.DecisionTopic(), func(m *nats.Msg) {
		tr.decided(m.Header.Get(bus.MetaCause), isAppended(m.Data))
	})
	if err != nil {
		return LoadResult{}, fmt.Errorf("loadgen: %w", err)
	}
	defer sub.Unsubscribe()
	pub, err := natsjs.NewPublisher(ctl)
	if err != nil {
		return LoadResult{}, err
	}
	start := time.Now()
	perr := make(chan error, 1)
	go func() {
		for e := 0; e < cfg.Events; e++ {
			for _, id := range ids {
				m := bus.NewLoadMessage(id)
				tr.publish(m)
				if err := pub.Publish(topo.LoadTopic(id), m); err != nil {
					perr <- err
					return
				}
			}
		}
	}()
	select {
	case <-tr.done:
	case err := <-perr:
		return LoadResult{}, err
	case <-ctx.Done():
		return tr.result("jetstream", cfg, time.Since(start)), errors.Join(errors.New("loadgen: run timed out"), ctx.Err())
	}
	return tr.result("jetstream", cfg, time.Since(start)), nil
}
