// Package service is the recovery service's wiring: it connects the
// transports (adapters/bus in process, adapters/natsjs over JetStream) to
// the decision (tailproof.Reconcile), which the transport packages do not
// import. `tailproof serve` and `tailproof loadtest` run it; a harness that
// embeds the service uses the same two deciders.
package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/natsjs"
	"github.com/tailproof/tailproof/guards"
)

// Published is a reconciliation as the recovery service publishes it: the
// Result's one JSON shape and the terminal lines it appended.
func Published(res tailproof.Result) (bus.Decision, error) {
	doc, err := json.Marshal(res)
	if err != nil {
		return bus.Decision{}, fmt.Errorf("service: encode decision for %s: %w", res.SessionID, err)
	}
	d := bus.Decision{Document: doc}
	if !res.DryRun {
		for _, a := range res.Appended() {
			d.Terminals = append(d.Terminals, bus.Terminal{Target: a.Target, Line: a.Line})
		}
	}
	return d, nil
}

// Decider is the bus.Decider that runs tailproof.Reconcile on store.
func Decider(store adapters.Store, opts tailproof.Options) bus.Decider {
	return func(ctx context.Context, sessionID string) (bus.Decision, error) {
		res, err := tailproof.Reconcile(ctx, store, sessionID, opts)
		if err != nil {
			return bus.Decision{}, err
		}
		return Published(res)
	}
}

// LeaseDecider is the natsjs.Decider that runs tailproof.Reconcile with the
// worker's lease guard added to opts.Guards.
func LeaseDecider(opts tailproof.Options) natsjs.Decider {
	return func(ctx context.Context, store adapters.Store, sessionID string, extra guards.Guard[*guards.Evidence]) (bus.Decision, []guards.Veto, error) {
		o := opts
		o.Guards = append(slices.Clone(opts.Guards), extra)
		res, err := tailproof.Reconcile(ctx, store, sessionID, o)
		var vetoes []guards.Veto
		for _, d := range res.Decisions {
			vetoes = append(vetoes, d.Vetoes...)
		}
		if err != nil {
			return bus.Decision{}, vetoes, err
		}
		d, perr := Published(res)
		return d, vetoes, perr
	}
}
