package main

import (
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// guardDecision is one guard's answer at one machine step.
type guardDecision struct {
	Event  string `json:"event"`
	Guard  string `json:"guard"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"`
}

// replayGuards lists, per reconcile event, the individual guards the
// machine composes (guards.Members of the same rules the reconciler uses).
// Replay still checks the vetoes it derives against the ones the machine
// recorded on every run, and shows only the machine's if they differ.
func replayGuards(reference bool) map[string][]guards.Guard[*guards.Evidence] {
	rules := reconcile.Tailproof()
	if reference {
		rules = reconcile.Qwen0244()
	}
	out := map[string][]guards.Guard[*guards.Evidence]{}
	for _, tr := range reconcile.Table.Transitions {
		out[tr.Event] = guards.Members(rules.Guards.For(reconcile.Event(tr.Event)))
	}
	return out
}

// explainGuards evaluates each guard of each step the machine attempted on
// the decision's evidence. Evidence only grows as the core advances and no
// guard reads what a later step adds, so the final evidence gives each
// step's answers. ok is false when the derived vetoes disagree with the
// machine's.
func explainGuards(steps []machines.Step, ev *guards.Evidence, machineVetoes []guards.Veto, reference bool) (out []guardDecision, ok bool) {
	if ev == nil {
		return nil, len(machineVetoes) == 0
	}
	byEvent := replayGuards(reference)
	var derived []guards.Veto
	for _, st := range steps {
		event := st.Event
		for _, g := range byEvent[event] {
			vs := g.Check(ev)
			if len(vs) == 0 {
				out = append(out, guardDecision{Event: event, Guard: g.Name(), Pass: true})
				continue
			}
			for _, v := range vs {
				out = append(out, guardDecision{Event: event, Guard: v.Guard, Reason: v.Reason})
				derived = append(derived, v)
			}
		}
	}
	if len(derived) != len(machineVetoes) {
		return out, false
	}
	for i := range derived {
		if derived[i] != machineVetoes[i] {
			return out, false
		}
	}
	return out, true
}
