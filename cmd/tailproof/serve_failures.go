package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// serveFailures remembers why sessions were not decided, so that an
// in-process serve exits with the code the same condition gives in every
// other command (a --now before a prompt's admission is 2, as in
// reconcile; an unreadable ledger 3; a failed append 4), after it has
// decided every other session. A hostile session id on stdin is 2.
type serveFailures struct {
	// clock names the clock and whether it came from --now (cli.Clock).
	clock    string
	fromFlag bool
	mu       sync.Mutex
	last     map[string]error // session → its decider's last error
	n        int
	first    error
}

func newServeFailures(clock string, fromFlag bool) *serveFailures {
	return &serveFailures{clock: clock, fromFlag: fromFlag, last: map[string]error{}}
}

// decider records each failure of decide; a retry that succeeds clears it.
func (f *serveFailures) decider(decide bus.Decider) bus.Decider {
	return func(ctx context.Context, id string) (bus.Decision, error) {
		d, err := decide(ctx, id)
		f.mu.Lock()
		if err != nil {
			f.last[id] = cli.Clock(err, f.clock, f.fromFlag)
		} else {
			delete(f.last, id)
		}
		f.mu.Unlock()
		return d, err
	}
}

// notDecided counts a session the service gave up on (poisoned), with its
// decider's last error when there was one.
func (f *serveFailures) notDecided(id, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	err, ok := f.last[id]
	if !ok {
		err = fmt.Errorf("%s", reason)
	}
	f.add(err)
}

// refused counts an input line that was not a session id.
func (f *serveFailures) refused(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.add(cli.WithCode(cli.Usage, err))
}

// input counts a stdin that could not be read to its end (exit 3).
func (f *serveFailures) input(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.add(cli.WithCode(cli.Input, err))
}

func (f *serveFailures) add(err error) {
	f.n++
	if f.first == nil {
		f.first = err
	}
}

// err is nil when every session named was decided; otherwise one error
// with the first failure's exit code (each failure was reported on stderr
// as it happened).
func (f *serveFailures) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return nil
	}
	return cli.WithCode(cli.Code(f.first, cli.Write), fmt.Errorf("%d session(s) named were not decided (each is reported above); the first: %w", f.n, f.first))
}
