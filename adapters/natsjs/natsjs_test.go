package natsjs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/natsjs"
	"github.com/tailproof/tailproof/adapters/natsjs/natstest"
	"github.com/tailproof/tailproof/service"
)

func server(t *testing.T) string {
	t.Helper()
	ns, err := natstest.StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

func connect(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Watermill's universal suite against our JetStream subscriber and
// watermill-nats' publisher, on an embedded server. ForceShort runs every
// test of the suite with its smaller message counts, keeping the package's
// default run bounded (each message is fsynced and double-acked); the
// tailer runs the suite at full size.
func TestJetStreamUniversal(t *testing.T) {
	url := server(t)
	mk := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		nc := connect(t, url)
		pub, err := natsjs.NewPublisher(nc)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := natsjs.NewSubscriber(nc, natsjs.SubscriberConfig{Group: group, AckWait: 5 * time.Second, NakDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return pub, sub
	}
	tests.TestPubSub(t,
		tests.Features{
			ConsumerGroups:                   true,
			ExactlyOnceDelivery:              false,
			GuaranteedOrder:                  true,
			Persistent:                       true,
			NewSubscriberReceivesOldMessages: true,
			ForceShort:                       true,
		},
		func(t *testing.T) (message.Publisher, message.Subscriber) { return mk(t, "") },
		mk,
	)
}

func leases(t *testing.T, nc *nats.Conn, owner string, ttl time.Duration) *natsjs.Leases {
	t.Helper()
	js, _ := jetstream.New(nc)
	l, err := natsjs.OpenLeases(context.Background(), js, "test-leases", owner, ttl, 1)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLeaseExclusiveAndExpiring(t *testing.T) {
	nc := connect(t, server(t))
	ctx := context.Background()
	a, b := leases(t, nc, "a", time.Second), leases(t, nc, "b", time.Second)
	la, err := a.Acquire(ctx, "s/../weird id")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "s/../weird id"); !errors.Is(err, natsjs.ErrLeaseHeld) {
		t.Fatalf("second owner: %v", err)
	}
	if err := la.Check(ctx); err != nil {
		t.Fatalf("held lease: %v", err)
	}
	// a stops renewing (it died, or stalled): after the TTL b may take it,
	// and a — should it wake up — knows it lost it.
	deadline := time.Now().Add(5 * time.Second)
	var lb *natsjs.Lease
	for lb == nil {
		if time.Now().After(deadline) {
			t.Fatal("lease never expired")
		}
		time.Sleep(100 * time.Millisecond)
		lb, _ = b.Acquire(ctx, "s/../weird id")
	}
	if err := la.Check(ctx); !errors.Is(err, natsjs.ErrLeaseLost) {
		t.Fatalf("expired lease: %v", err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, "s/../weird id"); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// A worker that lost its lease stops before appending: the lease guard
// vetoes, the veto is in the decision, the ledger is untouched, and the
// error asks for the load event to be requeued.
func TestLostLeaseVetoesAndAppendsNothing(t *testing.T) {
	nc := connect(t, server(t))
	ctx := context.Background()
	store := memory.NewQwenStore()
	id := bustest.SessionID(3)
	if err := bustest.Seed(ctx, store, id, 1); err != nil {
		t.Fatal(err)
	}
	l := leases(t, nc, "a", 10*time.Second)
	lease, err := l.Acquire(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Someone removes the record (an operator, or the TTL after a stall).
	js, _ := jetstream.New(nc)
	kv, _ := js.KeyValue(ctx, "test-leases")
	keys, _ := kv.ListKeys(ctx)
	for k := range keys.Keys() {
		if err := kv.Purge(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	decide := service.LeaseDecider(tailproof.Options{Now: func() int64 { return bustest.BaseMs + 60_000 }})
	d, err := natsjs.DecideUnder(ctx, lease, store, id, decide)
	if !errors.Is(err, bus.ErrRequeue) || !errors.Is(err, natsjs.ErrLeaseLost) {
		t.Fatalf("err = %v", err)
	}
	doc := docOf(t, d)
	if _, verdict, appended := doc.Verdict(); verdict != string(tailproof.VerdictUnknown) || appended != "" {
		t.Fatalf("decision %s", d.Document)
	}
	found := false
	for _, v := range doc.Decisions[0].Vetoes {
		found = found || (v.Guard == natsjs.LeaseGuardName && strings.Contains(v.Reason, "lease lost"))
	}
	if !found {
		t.Fatalf("no lease veto in %s", d.Document)
	}
	if recs, _ := tailproof.RecentTerminals(ctx, store, id); len(recs) != 0 {
		t.Fatalf("appended %v", recs)
	}
	// With the lease held, the same call decides and appends.
	lease, err = l.Acquire(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	d, err = natsjs.DecideUnder(ctx, lease, store, id, decide)
	if _, verdict, _ := docOf(t, d).Verdict(); err != nil || verdict != string(tailproof.VerdictCompleted) {
		t.Fatalf("held: %s %v", d.Document, err)
	}
}

// The lease wrapper must not hide the store's workspace: a transcript from
// another workspace is still refused under a lease.
func TestLeasedStoreKeepsWorkspaceCheck(t *testing.T) {
	nc := connect(t, server(t))
	ctx := context.Background()
	store := memory.NewQwenStore()
	id := bustest.SessionID(4)
	if err := store.SeedLedger(ctx, id, bustest.InFlightLedger(bustest.Prompt(id))); err != nil {
		t.Fatal(err)
	}
	if err := store.SeedTranscript(ctx, id, bustest.CompletedTranscriptIn("/elsewhere", 1)); err != nil {
		t.Fatal(err)
	}
	lease, err := leases(t, nc, "a", 10*time.Second).Acquire(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	d, err := natsjs.DecideUnder(ctx, lease, store, id, service.LeaseDecider(tailproof.Options{Now: func() int64 { return bustest.BaseMs + 60_000 }}))
	if _, verdict, appended := docOf(t, d).Verdict(); err != nil || verdict != string(tailproof.VerdictUnknown) || appended != "" {
		t.Fatalf("foreign transcript under a lease: %s %v", d.Document, err)
	}
}

func docOf(t *testing.T, d bus.Decision) bustest.Doc {
	t.Helper()
	doc, err := bustest.ParseDoc(d.Document)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
