package bus

import (
	"context"
	"encoding/json"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
)

// FromDecision converts a tailproof decision to its published shape (that of
// `tailproof reconcile --json`).
func FromDecision(d tailproof.Decision) Decision {
	out := Decision{Verdict: string(d.Verdict), Appended: json.RawMessage("null"), Vetoes: []Veto{}}
	if d.Target != "" {
		t := d.Target
		out.Target = &t
	}
	if d.Line != nil {
		out.Appended = append(json.RawMessage(nil), d.Line...)
	}
	for _, v := range d.Vetoes {
		out.Vetoes = append(out.Vetoes, Veto{Guard: v.Guard, Reason: v.Reason})
	}
	return out
}

// Reconciler returns the Decider that runs tailproof.Reconcile on store.
// opts.Now is required, as for Reconcile.
func Reconciler(store adapters.Store, opts tailproof.Options) Decider {
	return func(ctx context.Context, sessionID string) (Decision, error) {
		d, err := tailproof.Reconcile(ctx, store, sessionID, opts)
		if err != nil {
			return Decision{}, err
		}
		out := FromDecision(d)
		out.DryRun = opts.DryRun
		return out, nil
	}
}
