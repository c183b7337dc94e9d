package natsjs_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/tailproof/tailproof/adapters/natsjs"
	"github.com/tailproof/tailproof/adapters/natsjs/natstest"
)

func startAt(t *testing.T, dir string, port int) *natsserver.Server {
	t.Helper()
	ns, err := natstest.StartServerOn(dir, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// A Subscribe while the only server is down — its setup request gets no
// reply — returns its channel at once rather than failing or waiting out
// ctx's long deadline (as a router's Subscribe does under a test's
// deadline), and sets the consumer up once the server is back. A failed or
// blocked Subscribe leaves a watermill router's remaining handlers
// unstarted and its Close waiting out its timeout.
func TestSubscribeRetriesTransientSetupFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out one setup attempt (5s)")
	}
	dir := t.TempDir()
	ns := startAt(t, dir, -1)
	port := ns.Addr().(*net.TCPAddr).Port
	nc := connect(t, ns.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	ns.Shutdown()
	ns.WaitForShutdown()

	sub, err := natsjs.NewSubscriber(nc, natsjs.SubscriberConfig{Group: "g", NakDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	returned := make(chan struct{})
	var ch <-chan *message.Message
	go func() {
		defer close(returned)
		ch, err = sub.Subscribe(ctx, "retry-topic")
	}()
	select {
	case <-returned:
	case <-time.After(3 * time.Second):
		t.Fatal("Subscribe blocked on an unreachable server")
	}
	if err != nil {
		t.Fatalf("Subscribe failed on a transient error: %v", err)
	}
	// Let the first setup attempt time out, so the server comes back to a
	// retry.
	time.Sleep(5500 * time.Millisecond)
	startAt(t, dir, port)
	pub, err := natsjs.NewPublisher(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The stream appears once the retry has run; publish until it has.
	for {
		err := pub.Publish("retry-topic", message.NewMessage("m1", []byte("x")))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("stream never created: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("channel closed before the message arrived")
		}
		if m.UUID != "m1" {
			t.Fatalf("got message %s, want m1", m.UUID)
		}
		m.Ack()
	case <-ctx.Done():
		t.Fatal("message never delivered after the server came back")
	}

	// Close ends the subscription promptly and closes its channel.
	done := make(chan error, 1)
	go func() { done <- sub.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, ok := <-ch; ok {
		t.Fatal("channel still open after Close")
	}
}
