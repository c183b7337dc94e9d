package bus_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/service"
)

type running struct {
	svc    *bus.Service
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, cfg bus.ServiceConfig) *running {
	t.Helper()
	svc, err := bus.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{svc: svc, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- svc.Run(ctx) }()
	select {
	case <-svc.Running():
	case <-time.After(5 * time.Second):
		t.Fatal("router did not start")
	}
	t.Cleanup(func() {
		cancel()
		svc.Close()
		<-r.done
	})
	return r
}

func subscribe(t *testing.T, sub message.Subscriber, topic string) <-chan *message.Message {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := sub.Subscribe(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func decisionOf(t *testing.T, m *message.Message) bustest.Doc {
	t.Helper()
	d, err := bustest.ParseDoc(m.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The service end to end, as `tailproof serve` runs it with no flags: the
// in-process transport and Qwen's layout on local files. A load event
// decides the session, appends the terminal, and publishes the decision and
// the terminal; a second load for the same session decides none.
func TestServiceEndToEnd(t *testing.T) {
	layout := jsonl.NewQwenLayout(t.TempDir(), "/w")
	store := jsonl.NewQwenStore(vfs.OS, layout)
	id := bustest.SessionID(1)
	if err := bustest.Seed(context.Background(), store, id, 3); err != nil {
		t.Fatal(err)
	}
	r := start(t, bus.ServiceConfig{
		Decide: service.Decider(store, tailproof.Options{Now: func() int64 { return bustest.BaseMs + 60_000 }}),
	})
	decisions := subscribe(t, r.svc.Subscriber(), bus.TopicDecision)
	terminals := subscribe(t, r.svc.Subscriber(), bus.TopicTerminal)

	// The in-process transport blocks a publish until it is acked, so load
	// events are published from another goroutine than the one reading.
	load := func() {
		go func() {
			if err := r.svc.Publisher().Publish(bus.TopicLoad, bus.NewLoadMessage(id)); err != nil {
				t.Error(err)
			}
		}()
	}
	load()
	dm := recv(t, decisions)
	target, verdict, appended := decisionOf(t, dm).Verdict()
	if target != bustest.Prompt(id) || verdict != "completed" || dm.Metadata.Get(bus.MetaSession) != id {
		t.Fatalf("decision %s", dm.Payload)
	}
	tm := recv(t, terminals)
	rec, err := ledger.Decode(tm.Payload)
	if err != nil || rec.PromptID != bustest.Prompt(id) || rec.InFlight {
		t.Fatalf("terminal %q: %v", tm.Payload, err)
	}
	if appended != string(tm.Payload) {
		t.Fatalf("decision appended %s, terminal %s", appended, tm.Payload)
	}
	recs, err := tailproof.RecentTerminals(context.Background(), store, id)
	if err != nil || len(recs) != 1 {
		t.Fatalf("ledger terminals %v %v", recs, err)
	}

	load()
	if target, verdict, appended := decisionOf(t, recv(t, decisions)).Verdict(); verdict != "none" || target != "" || appended != "" {
		t.Fatalf("second decision %s %s %s", target, verdict, appended)
	}
	none(t, terminals, 50*time.Millisecond)
}

// Decisions for one session come out in the order its load events went in.
func TestServiceOrderedPerSession(t *testing.T) {
	var seq atomic.Int64
	r := start(t, bus.ServiceConfig{
		Decide: func(ctx context.Context, sid string) (bus.Decision, error) {
			n := seq.Add(1)
			return bustest.FakeDecision(sid, "none"+strings.Repeat("x", int(n%3))), nil
		},
	})
	decisions := subscribe(t, r.svc.Subscriber(), bus.TopicDecision)
	const n = 200
	go func() {
		for i := range n {
			_ = r.svc.Publisher().Publish(bus.TopicLoad, bus.NewLoadMessage(bustest.SessionID(i)))
		}
	}()
	for i := range n {
		m := recv(t, decisions)
		if got := m.Metadata.Get(bus.MetaSession); got != bustest.SessionID(i) {
			t.Fatalf("decision %d is for %s", i, got)
		}
	}
}

// A panicking decider is recovered, retried with backoff, then parked on
// the poison topic; the next session is decided after it. ErrRequeue is
// never poisoned.
func TestServicePoisonAfterRetries(t *testing.T) {
	var calls atomic.Int32
	r := start(t, bus.ServiceConfig{
		MaxRetries:    2,
		RetryInterval: time.Millisecond,
		Decide: func(ctx context.Context, sid string) (bus.Decision, error) {
			calls.Add(1)
			if sid == "boom" {
				panic("cannot decide " + sid)
			}
			return bustest.FakeDecision(sid, "none"), nil
		},
	})
	poison := subscribe(t, r.svc.Subscriber(), bus.TopicPoison)
	decisions := subscribe(t, r.svc.Subscriber(), bus.TopicDecision)
	go func() {
		_ = r.svc.Publisher().Publish(bus.TopicLoad, bus.NewLoadMessage("boom"))
		_ = r.svc.Publisher().Publish(bus.TopicLoad, message.NewMessage("bad", []byte(`not json`)))
		_ = r.svc.Publisher().Publish(bus.TopicLoad, bus.NewLoadMessage("fine"))
	}()
	p := recv(t, poison)
	if p.Metadata.Get(middleware.PoisonedHandlerKey) != "reconcile:"+bus.TopicLoad || !strings.Contains(p.Metadata.Get(middleware.ReasonForPoisonedKey), "cannot decide boom") {
		t.Fatalf("poisoned %v", p.Metadata)
	}
	if got := calls.Load(); got != 3 {
		t.Fatalf("decider ran %d times, want 1 + 2 retries", got)
	}
	if p := recv(t, poison); p.UUID != "bad" {
		t.Fatalf("second poison %s", p.UUID)
	}
	if m := recv(t, decisions); m.Metadata.Get(bus.MetaSession) != "fine" {
		t.Fatalf("decision for %s", m.Metadata.Get(bus.MetaSession))
	}
}

func TestServiceRequeueIsNotPoisoned(t *testing.T) {
	var calls atomic.Int32
	r := start(t, bus.ServiceConfig{
		MaxRetries:    1,
		RetryInterval: time.Millisecond,
		Decide: func(ctx context.Context, sid string) (bus.Decision, error) {
			if calls.Add(1) < 4 {
				return bus.Decision{}, errors.Join(bus.ErrRequeue, errors.New("lease held elsewhere"))
			}
			return bustest.FakeDecision(sid, "none"), nil
		},
	})
	poison := subscribe(t, r.svc.Subscriber(), bus.TopicPoison)
	decisions := subscribe(t, r.svc.Subscriber(), bus.TopicDecision)
	go func() { _ = r.svc.Publisher().Publish(bus.TopicLoad, bus.NewLoadMessage("s")) }()
	recv(t, decisions)
	none(t, poison, 50*time.Millisecond)
	if calls.Load() != 4 {
		t.Fatalf("calls %d", calls.Load())
	}
}
