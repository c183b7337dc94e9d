package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tailproof/tailproof/simulations/load"
)

func init() {
	register(command{
		name:    "loadtest",
		summary: "measure the recovery service: N sessions × M load events through embedded JetStream and in-process (loopback only)",
		run:     runLoadtest,
	})
}

func runLoadtest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sessions   = fs.Int("sessions", 200, "`N` sessions, each with one prompt left in_flight")
		evs        = fs.Int("events", 5, "`M` load events per session (the first decides and appends, the rest decide none)")
		workers    = fs.Int("workers", 3, "JetStream workers")
		partitions = fs.Int("partitions", 8, "JetStream load partitions")
		transport  = fs.String("transport", "both", "`jetstream`, `inprocess` or `both`")
		timeout    = fs.Duration("timeout", 5*time.Minute, "give up after `DURATION`")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tailproof loadtest [--sessions N] [--events M] [--workers W] [--partitions P] [--transport both|jetstream|inprocess]")
		fmt.Fprintln(stderr, "Runs an embedded nats-server on 127.0.0.1 (storage in a temp dir, removed after) and in-memory sessions.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *sessions <= 0 || *evs <= 0 {
		fmt.Fprintln(stderr, "tailproof loadtest: --sessions and --events must be positive")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cfg := load.LoadConfig{Sessions: *sessions, Events: *evs, Workers: *workers, Partitions: *partitions}
	runs := map[string]func(context.Context, load.LoadConfig) (load.LoadResult, error){
		"inprocess": load.RunInProcess, "jetstream": load.RunJetStream,
	}
	var order []string
	switch *transport {
	case "both":
		order = []string{"inprocess", "jetstream"}
	case "inprocess", "jetstream":
		order = []string{*transport}
	default:
		fmt.Fprintf(stderr, "tailproof loadtest: unknown transport %q\n", *transport)
		return 2
	}
	for _, name := range order {
		r, err := runs[name](ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "tailproof loadtest: %s: %v\n", name, err)
			return 1
		}
		fmt.Fprintln(stdout, r)
	}
	return 0
}
