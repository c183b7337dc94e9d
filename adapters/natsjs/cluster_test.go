package natsjs_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/natsjs"
	"github.com/tailproof/tailproof/adapters/natsjs/natstest"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/service"
)

// slowStore stretches each decision a little so the node kill lands while
// decisions are in progress.
type slowStore struct{ adapters.Store }

func (s slowStore) OpenTranscript(ctx context.Context, id string) (io.ReadCloser, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Store.OpenTranscript(ctx, id)
}

// retryCounter is a worker logger that counts the subscriber's setup
// retries and drops everything else.
type retryCounter struct{ n *atomic.Int64 }

func (c retryCounter) Error(msg string, _ error, _ watermill.LogFields) {
	if strings.HasPrefix(msg, "consumer setup failed") {
		c.n.Add(1)
	}
}
func (retryCounter) Info(string, watermill.LogFields)                   {}
func (retryCounter) Debug(string, watermill.LogFields)                  {}
func (retryCounter) Trace(string, watermill.LogFields)                  {}
func (c retryCounter) With(watermill.LogFields) watermill.LoggerAdapter { return c }

func waitJetStream(t *testing.T, nc *nats.Conn) {
	t.Helper()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jetstream never ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// terminals counts, per session, the terminal records for its prompt in the
// shared ledgers.
func terminals(t *testing.T, store adapters.Store, ids []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, id := range ids {
		rc, err := store.OpenLedger(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		recs, _, err := ledger.Read(rc, false)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.IsTerminal() && r.PromptID == bustest.Prompt(id) {
				out[id]++
			}
		}
	}
	return out
}

// Three clustered nats-servers in this process, streams and the lease
// bucket replicated three ways, three workers (one per node) over shared
// session storage. One node is shut down while decisions are in flight.
// Every session ends with exactly one terminal for its prompt: no decision
// lost, none made twice; and no prompt has two published decisions that
// appended.
func TestClusterNodeKilledMidRun(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 12
	}
	servers, err := natstest.StartCluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	alive := []bool{true, true, true}
	t.Cleanup(func() {
		for i, s := range servers {
			if alive[i] {
				s.Shutdown()
			}
		}
	})
	urls := make([]string, 3)
	for i, s := range servers {
		urls[i] = s.ClientURL()
	}
	// Each worker prefers its own node and fails over to the others.
	dial := func(i int) *nats.Conn {
		order := append([]string{urls[i]}, append(append([]string{}, urls[:i]...), urls[i+1:]...)...)
		return connect(t, strings.Join(order, ","), nats.DontRandomize(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	}
	ctl := dial(0)
	waitJetStream(t, ctl)

	topo := natsjs.Topology{Partitions: 6, Replicas: 3, Prefix: "tp", LeaseTTL: 3 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	// Placement needs every peer known to the meta leader: retry until the
	// cluster has formed.
	for {
		err := topo.Provision(ctx, ctl)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	shared := memory.NewQwenStore()
	var ids []string
	for i := range n {
		id := bustest.SessionID(100 + i)
		ids = append(ids, id)
		if err := bustest.Seed(ctx, shared, id, 2); err != nil {
			t.Fatal(err)
		}
	}
	pub, _ := natsjs.NewPublisher(ctl)
	for _, id := range ids {
		if err := topo.PublishLoad(pub, id); err != nil {
			t.Fatal(err)
		}
	}

	var workers []*natsjs.Worker
	var wg sync.WaitGroup
	runErrs := make([]error, 3)
	retries := retryCounter{n: new(atomic.Int64)}
	for i := range 3 {
		w, err := natsjs.NewWorker(ctx, natsjs.WorkerConfig{
			Name: fmt.Sprintf("worker-%d", i), Conn: dial(i), Topology: topo,
			Store: slowStore{shared}, AckWait: 3 * time.Second, Logger: retries,
			Decide: service.LeaseDecider(tailproof.Options{Now: func() int64 { return bustest.BaseMs + 60_000 }}),
		})
		if err != nil {
			t.Fatal(err)
		}
		workers = append(workers, w)
		wg.Add(1)
		go func() { defer wg.Done(); runErrs[i] = w.Run(ctx) }()
	}
	// A worker whose Run or Close fails stopped consuming its partitions, or
	// left handlers the router waited its whole close timeout for: a node
	// dying must cause neither (docs/bus.md, "A node dying while a worker
	// subscribes").
	defer func() {
		start := time.Now()
		cancel()
		for i, w := range workers {
			if err := w.Close(); err != nil {
				t.Errorf("worker %d close: %v", i, err)
			}
		}
		stopped := make(chan struct{})
		go func() { wg.Wait(); close(stopped) }()
		select {
		case <-stopped:
			for i, err := range runErrs {
				if err != nil {
					t.Errorf("worker %d run: %v", i, err)
				}
			}
		case <-time.After(15 * time.Second):
			t.Error("workers did not stop within 15s of Close")
		}
		t.Logf("workers closed in %v; %d consumer setup retries", time.Since(start).Round(time.Millisecond), retries.n.Load())
	}()

	settled := func() int {
		c := 0
		for _, k := range terminals(t, shared, ids) {
			if k > 0 {
				c++
			}
		}
		return c
	}
	// Kill node 1 once some, not all, sessions are decided.
	for settled() < n/5 {
		if ctx.Err() != nil {
			t.Fatal("no progress before the kill")
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := settled()
	servers[1].Shutdown()
	alive[1] = false
	t.Logf("killed n1 with %d/%d sessions decided", before, n)
	if before == n {
		t.Log("warning: every session was decided before the kill landed")
	}
	killedAt := time.Now()
	for settled() < n {
		if ctx.Err() != nil {
			t.Fatalf("only %d/%d sessions decided after the kill", settled(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("all %d decided %v after the kill", n, time.Since(killedAt).Round(time.Millisecond))
	// Give stragglers (redeliveries after AckWait) time to double-decide, if
	// they were going to.
	time.Sleep(3500 * time.Millisecond)
	for id, k := range terminals(t, shared, ids) {
		if k != 1 {
			t.Errorf("session %s has %d terminals for its prompt", id, k)
		}
	}

	// The published decisions: at most one appended per prompt.
	sub, _ := natsjs.NewSubscriber(ctl, natsjs.SubscriberConfig{})
	defer sub.Close()
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	ch, err := sub.Subscribe(sctx, topo.DecisionTopic())
	if err != nil {
		t.Fatal(err)
	}
	appended := map[string]int{}
	total := 0
	for {
		select {
		case m := <-ch:
			d, err := bustest.ParseDoc(m.Payload)
			if err != nil {
				t.Fatal(err)
			}
			m.Ack()
			total++
			if target, _, a := d.Verdict(); a != "" {
				appended[target]++
			}
			continue
		case <-time.After(time.Second):
		}
		break
	}
	for p, k := range appended {
		if k > 1 {
			t.Errorf("prompt %s: %d published decisions appended", p, k)
		}
	}
	t.Logf("%d decisions published, %d with an append", total, len(appended))
}
