package main

import (
	"strings"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines"
)

// guardDecision is one guard's answer at one machine step.
type guardDecision struct {
	Event  string `json:"event"`
	Guard  string `json:"guard"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"`
}

// replayGuards lists, per reconcile event, the individual guards the
// machine composes with guards.All (machines.DefaultReconcileGuards and the
// reference set in reconcile.go). The composite does not expose its members,
// so replay keeps this list and checks it against the machine on every run:
// when the vetoes it derives differ from the ones the machine recorded,
// replay says so and shows only the machine's.
func replayGuards(reference bool) map[string][]guards.Guard[*guards.Evidence] {
	check := []guards.Guard[*guards.Evidence]{
		guards.TranscriptIntegrity, guards.SeveralDangling, guards.Ownership, guards.DispatchMarker,
		guards.Deadline, guards.CompressionCheckpoint, guards.SystemProvenance, guards.BackgroundTurn,
		guards.Temporal, guards.PredecessorFence,
	}
	if reference {
		check = []guards.Guard[*guards.Evidence]{
			guards.TranscriptIntegrity, guards.DispatchMarker, guards.Deadline,
			guards.CompressionCheckpoint, guards.Temporal, guards.PredecessorFence,
		}
	}
	return map[string][]guards.Guard[*guards.Evidence]{
		machines.EvAttribute: {guards.Attribution},
		machines.EvCheck:     check,
		machines.EvClassify:  {guards.CompletionEvidence, guards.ShapeGuess},
		machines.EvCommit:    {guards.Race},
	}
}

// explainGuards evaluates each guard of each step the machine attempted
// (read from the trace) on the decision's evidence. Evidence only grows as
// the reconciler advances and no guard reads what a later step adds, so the
// final evidence gives each step's answers. ok is false when the derived
// vetoes disagree with the machine's.
func explainGuards(trace []string, ev *guards.Evidence, machineVetoes []guards.Veto, reference bool) (out []guardDecision, ok bool) {
	if ev == nil {
		return nil, len(machineVetoes) == 0
	}
	byEvent := replayGuards(reference)
	var derived []guards.Veto
	for _, line := range trace {
		rest, found := strings.CutPrefix(line, "machine ")
		if !found {
			continue
		}
		event, _, _ := strings.Cut(rest, ":")
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
