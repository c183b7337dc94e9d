package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/loadgen"
)

func init() {
	register(command{
		name:    "loadtest",
		summary: "measure the recovery service: N sessions × M load events through embedded JetStream and in-process (loopback only)",
		run:     runLoadtest,
	})
}

func runLoadtest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "loadtest", func() error {
		fs := cli.NewFlagSet("loadtest",
			"usage: tailproof loadtest [--sessions N] [--events M] [--workers W] [--partitions P] [--transport both|jetstream|inprocess] [--timeout D]",
			"Runs an embedded nats-server on 127.0.0.1 (storage in a temp dir, removed after) and in-memory sessions.")
		var (
			sessions   = fs.Int("sessions", 200, "`N` sessions, each with one prompt left in_flight")
			evs        = fs.Int("events", 5, "`M` load events per session (the first decides and appends, the rest decide none)")
			workers    = fs.Int("workers", 3, "JetStream workers")
			partitions = fs.Int("partitions", 8, "JetStream load partitions")
			transport  = fs.String("transport", "both", "`jetstream`, `inprocess` or `both`")
			timeout    = fs.Duration("timeout", 5*time.Minute, "give up after `DURATION`")
		)
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		for _, c := range []error{cli.AtLeast("--sessions", *sessions, 1), cli.AtLeast("--events", *evs, 1),
			cli.AtLeast("--workers", *workers, 1), cli.AtLeast("--partitions", *partitions, 1)} {
			if c != nil {
				return c
			}
		}
		if *timeout <= 0 {
			return cli.Usagef("--timeout must be positive, got %s", *timeout)
		}
		runs := map[string]func(context.Context, loadgen.LoadConfig) (loadgen.LoadResult, error){
			"inprocess": loadgen.RunInProcess, "jetstream": loadgen.RunJetStream,
		}
		var order []string
		switch *transport {
		case "both":
			order = []string{"inprocess", "jetstream"}
		case "inprocess", "jetstream":
			order = []string{*transport}
		default:
			return cli.Usagef("--transport must be jetstream, inprocess or both, got %q", *transport)
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		w := &cli.Printer{W: stdout}
		for _, name := range order {
			bar := cli.NewProgress(stderr, name, *sessions**evs)
			cfg := loadgen.LoadConfig{Sessions: *sessions, Events: *evs, Workers: *workers, Partitions: *partitions,
				Progress: func(done, _ int) { bar.Set(done, "") }}
			r, err := runs[name](ctx, cfg)
			bar.Done()
			if errors.Is(err, context.DeadlineExceeded) {
				return cli.WithCode(cli.CheckFailed, fmt.Errorf("%s: not done within --timeout %s: %w", name, *timeout, err))
			}
			if err != nil {
				return cli.WithCode(cli.Code(err, cli.Unavailable), fmt.Errorf("%s: %w", name, err))
			}
			w.Printf("%v\n", r)
		}
		return w.Err()
	})
}
