package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/natsjs"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/service"
)

func init() {
	register(command{
		name:    "serve",
		summary: "run the recovery service: decide each session named on stdin (or found by --scan) and print its decision",
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return runServe(ctx, args, os.Stdin, stdout, stderr)
		},
	})
}

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "serve", func() error { return serve(ctx, args, stdin, stdout, stderr) })
}

func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("serve",
		"usage: tailproof serve [--qwen-runtime DIR] [--cwd WORKSPACE] [--scan] [--now MS] [--dry-run] [--nats URL [--worker NAME]]",
		"Session ids are read from stdin, one per line; each decision is printed as one JSON line.",
		"In-process, serve exits once stdin is closed and every session named is decided; with --nats it runs until interrupted.")
	var (
		runtime    = fs.String("qwen-runtime", "", "Qwen Code's runtime `DIR` (default: $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen)")
		cwd        = fs.String("cwd", "", "the `WORKSPACE` whose sessions are served (default: the current directory)")
		scan       = fs.Bool("scan", false, "also decide every active session found in the workspace's chats directory")
		now        = fs.Int64("now", 0, "the clock in Unix `MS` for appended records (default: the system clock)")
		dryRun     = fs.Bool("dry-run", false, "decide without appending")
		natsURL    = fs.String("nats", "", "run as a JetStream worker on the NATS server(s) at `URL` (comma-separated) instead of in-process")
		worker     = fs.String("worker", "", "this worker's `NAME`, unique in the deployment (with --nats; default: host-pid)")
		partitions = fs.Int("partitions", 8, "load partitions (with --nats; the same on every worker)")
		replicas   = fs.Int("replicas", 1, "stream and lease replicas (with --nats)")
		leaseTTL   = fs.Duration("lease-ttl", 10*time.Second, "how long a dead worker's session lease outlives it (with --nats)")
	)
	if err := fs.Parse(args, stdout); err != nil {
		return err
	}
	if fs.Given("now") {
		if err := cli.UnixMillis("--now", *now); err != nil {
			return err
		}
	}
	if err := cli.AtLeast("--partitions", *partitions, 1); err != nil {
		return err
	}
	if err := cli.AtLeast("--replicas", *replicas, 1); err != nil {
		return err
	}
	if *leaseTTL <= 0 {
		return cli.Usagef("--lease-ttl must be positive, got %s", *leaseTTL)
	}
	dir, err := cli.RuntimeDir(*runtime)
	if err != nil {
		return err
	}
	ws := *cwd
	if ws == "" {
		d, err := os.Getwd()
		if err != nil {
			return cli.WithCode(cli.Input, err)
		}
		ws = d
	}
	// Every session is read and decided inside the runtime directory only.
	fsys, err := vfs.Within(dir)
	if err != nil {
		return cli.WithCode(cli.Input, fmt.Errorf("the Qwen runtime directory: %w", err))
	}
	defer fsys.Close()
	store := jsonl.NewQwenStore(fsys, jsonl.NewQwenLayout(dir, ws))
	clock := func() int64 { return time.Now().UnixMilli() }
	if *now != 0 {
		n := *now
		clock = func() int64 { return n }
	}
	opts := tailproof.Options{Now: clock, DryRun: *dryRun}
	fails := newServeFailures(map[bool]string{true: "--now", false: "the system clock"}[*now != 0], *now != 0)

	var out sync.Mutex
	// Each decision document is printed as published: the one shape of
	// `reconcile --json`, which names its session.
	print := func(doc []byte) {
		out.Lock()
		defer out.Unlock()
		stdout.Write(append(bytes.TrimSpace(doc), '\n'))
	}
	sessions := make(chan string)
	go func() {
		defer close(sessions)
		if *scan {
			ids, err := store.ScanTranscripts(ctx, jsonl.Active)
			if err != nil {
				fmt.Fprintf(stderr, "tailproof serve: scan: %v\n", err)
			}
			for _, id := range ids {
				select {
				case sessions <- id:
				case <-ctx.Done():
					return
				}
			}
		}
		if stdin == nil {
			return
		}
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 0, 4096), maxStdinLine)
		line, offset := 0, int64(0)
		for sc.Scan() {
			line++
			offset += int64(len(sc.Bytes())) + 1
			id := strings.TrimSpace(sc.Text())
			if id == "" {
				continue
			}
			if err := jsonl.CheckSessionID(id); err != nil {
				fmt.Fprintf(stderr, "tailproof serve: %v\n", err)
				fails.refused(err)
				continue
			}
			select {
			case sessions <- id:
			case <-ctx.Done():
				return
			}
		}
		// A line longer than any id (stdin is /dev/zero, a file of one huge
		// line, a stream with no newline) or a failed read ends the list
		// where it failed: reading on could last for ever, and stopping
		// silently would read as a closed stdin (exit 0). The sessions
		// named before it are still decided.
		if err := stdinError(sc.Err(), line+1, offset); err != nil {
			fmt.Fprintf(stderr, "tailproof serve: %v\n", err)
			fails.input(err)
		}
	}()
	if *natsURL != "" {
		name := *worker
		if name == "" {
			host, _ := os.Hostname()
			name = fmt.Sprintf("%s-%d", host, os.Getpid())
		}
		topo := natsjs.Topology{Partitions: *partitions, Replicas: *replicas, LeaseTTL: *leaseTTL}
		if err := serveNATS(ctx, *natsURL, name, topo, store, opts, sessions, print, stderr); err != nil {
			return cli.WithCode(cli.Code(err, cli.Unavailable), err)
		}
		return nil
	}
	if err := serveInProcess(ctx, store, opts, sessions, print, stderr, fails); err != nil {
		return cli.WithCode(cli.Code(err, cli.Internal), err)
	}
	return fails.err()
}

func serveInProcess(ctx context.Context, store *jsonl.QwenStore, opts tailproof.Options, sessions <-chan string, print func([]byte), stderr io.Writer, fails *serveFailures) error {
	svc, err := bus.NewService(bus.ServiceConfig{Decide: fails.decider(service.Decider(store, opts))})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- svc.Run(rctx) }()
	<-svc.Running()
	defer svc.Close()

	var mu sync.Mutex
	pending := map[string]string{} // load uuid → session
	closed := false
	done := make(chan struct{})
	settle := func(uuid string) {
		mu.Lock()
		defer mu.Unlock()
		delete(pending, uuid)
		if closed && len(pending) == 0 {
			select {
			case <-done:
			default:
				close(done)
			}
		}
	}
	decisions, err := svc.Subscriber().Subscribe(rctx, bus.TopicDecision)
	if err != nil {
		return err
	}
	poison, err := svc.Subscriber().Subscribe(rctx, bus.TopicPoison)
	if err != nil {
		return err
	}
	go func() {
		for m := range decisions {
			if json.Valid(m.Payload) {
				print(m.Payload)
			}
			m.Ack()
			settle(m.Metadata.Get(bus.MetaCause))
		}
	}()
	go func() {
		for m := range poison {
			fmt.Fprintf(stderr, "tailproof serve: session %s not decided: %s\n", m.Metadata.Get(bus.MetaSession), m.Metadata.Get(middleware.ReasonForPoisonedKey))
			fails.notDecided(m.Metadata.Get(bus.MetaSession), m.Metadata.Get(middleware.ReasonForPoisonedKey))
			m.Ack()
			settle(m.UUID)
		}
	}()
	// The in-process transport blocks a publish until the load is handled,
	// so loads go out from their own goroutine and in order.
	for id := range sessions {
		m := bus.NewLoadMessage(id)
		mu.Lock()
		pending[m.UUID] = id
		mu.Unlock()
		if err := svc.Publisher().Publish(bus.TopicLoad, m); err != nil {
			return err
		}
	}
	mu.Lock()
	closed = true
	if len(pending) == 0 {
		close(done)
	}
	mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case err := <-runErr:
		return err
	}
}

func serveNATS(ctx context.Context, url, name string, topo natsjs.Topology, store *jsonl.QwenStore, opts tailproof.Options, sessions <-chan string, print func([]byte), stderr io.Writer) error {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	w, err := natsjs.NewWorker(ctx, natsjs.WorkerConfig{Name: name, Conn: nc, Topology: topo, Store: store, Decide: service.LeaseDecider(opts)})
	if err != nil {
		return err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- w.Run(ctx) }()
	<-w.Running()
	defer w.Close()
	// Decisions made by any worker are printed as they are stored.
	sub, err := nc.Subscribe(topo.DecisionTopic(), func(m *nats.Msg) {
		if json.Valid(m.Data) {
			print(m.Data)
		}
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	pub, err := natsjs.NewPublisher(nc)
	if err != nil {
		return err
	}
	var publisher message.Publisher = pub
	for id := range sessions {
		if err := topo.PublishLoad(publisher, id); err != nil {
			fmt.Fprintf(stderr, "tailproof serve: publish load for %s: %v\n", id, err)
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-runErr:
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
}

// maxStdinLine bounds a line of serve's stdin: a session id is at most a
// few hundred bytes (jsonl.CheckSessionID), so a longer line is no id.
const maxStdinLine = 64 << 10

// stdinError positions a failed read of serve's stdin at the line it was
// reading (1-based) and the byte offset that line starts at.
func stdinError(err error, line int, offset int64) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return cli.Inputf("stdin line %d, offset %d: more than %d bytes without a newline, so not a session id (one a line); stopped reading stdin", line, offset, maxStdinLine)
	}
	return cli.WithCode(cli.Input, fmt.Errorf("stdin line %d, offset %d: %w; stopped reading stdin", line, offset, err))
}
