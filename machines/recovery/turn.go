package recovery

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/interruption"
)

// Turn is a Qwen session's last prompt in the terms every harness's `turn`
// object uses (issue #15 item 7, ADR 0033): its verdict with the rule that
// gave it or every veto, what a resume would resend and which tool calls
// were left without a result.
type Turn struct {
	Prompt string
	// Verdict is OutcomeCompleted, OutcomeInterrupted or OutcomeUnknown.
	Verdict string
	// Because names what gave a decided verdict: the reconcile machine's
	// route (own-turn-result, tail-interrupted, ...), LedgerTerminal, or
	// TurnResultOnly.
	Because string
	// Vetoes are every refusal that left the verdict unknown.
	Vetoes []guards.Veto
	// End is the state of the prompt's own system/turn_result on the chain
	// ("" when none): Qwen Code 0.24.4's record of how the turn ended.
	End string
	// Terminal is the ledger's terminal for the prompt, if it has one.
	Terminal *ledger.Record
	// Resend are the prompt's real-user parts a resume would send again
	// (an interrupted prompt only): never a tool response, a synthetic
	// result, a notification, cron or other system-provenance part.
	// ResendVetoes say why a resume must not send them on its own.
	Resend       []ResendPart
	ResendVetoes []guards.Veto
	// Dangling are the prompt's tool calls without a result. Qwen Code
	// writes a tool_result only after the call returns, so each may or may
	// not have run.
	Dangling []interruption.Call
}

// Because values besides the reconcile machine's routes.
const (
	// LedgerTerminal: the ledger already settled the prompt.
	LedgerTerminal = "ledger-terminal"
	// TurnResultOnly: no ledger was read; the prompt's own turn_result says
	// how its turn ended.
	TurnResultOnly = "own-turn-result-without-ledger"
)

// TurnInput is what the façade knows of the session's last prompt: the last
// admitted in the ledger, else (no ledger, or no admission in it) the last
// prompt identity on the active chain.
type TurnInput struct {
	Prompt string
	// LedgerRead: a ledger was read. Admitted: Prompt is its last
	// admission; Terminal is then its first terminal for Prompt after that
	// admission.
	LedgerRead, Admitted bool
	Terminal             *ledger.Record
	// Decided: the reconcile core decided Prompt (it dangles and the rules
	// consider it); Pending is that decision, Route its route, Vetoes its
	// refusals. Rules names the rule set.
	Decided bool
	Pending Pending
	Route   string
	Vetoes  []guards.Veto
	Rules   string
	// TurnResult is the state of Prompt's last turn_result on the chain.
	TurnResult string
}

// lastTurn derives the turn object from the plan (st, for in.Target's tail)
// and what the façade knows of the last prompt. The verdict is the
// reconcile machine's for a dangling prompt, the ledger's terminal for a
// settled one; without a ledger only the prompt's own turn_result decides
// it, since the machine decides nothing the ledger did not admit.
func lastTurn(in Input, st *Status) *Turn {
	l := in.Last
	if l.Prompt == "" {
		return nil
	}
	t := &Turn{Prompt: l.Prompt, Verdict: OutcomeUnknown, End: l.TurnResult, Terminal: l.Terminal}
	switch {
	case l.Terminal != nil:
		t.Because, t.Verdict = LedgerTerminal, OutcomeInterrupted
		if l.Terminal.Terminal == ledger.Completed {
			t.Verdict = OutcomeCompleted
		}
	case l.Decided:
		switch l.Pending.Outcome {
		case OutcomeCompleted, OutcomeInterrupted:
			t.Verdict, t.Because = l.Pending.Outcome, l.Route
		case OutcomeSettled: // its own turn_result: cancelled or error
			t.Verdict, t.Because = OutcomeInterrupted, l.Route
		default:
			t.Vetoes = l.Vetoes
		}
	case l.Admitted:
		t.Vetoes = []guards.Veto{{Guard: "dangling-policy",
			Reason: "prompt " + l.Prompt + " is in flight in the ledger, and the " + l.Rules + " rules decide only the first dangling prompt"}}
	case l.TurnResult == "completed":
		t.Verdict, t.Because = OutcomeCompleted, TurnResultOnly
	case l.TurnResult != "":
		t.Verdict, t.Because = OutcomeInterrupted, TurnResultOnly
	default:
		why := "no prompt ledger was read"
		if l.LedgerRead {
			why = "the ledger holds no admission of " + l.Prompt
		}
		t.Vetoes = []guards.Veto{{Guard: "ledger",
			Reason: why + " and the transcript holds no turn_result for it: Qwen Code records a prompt's terminal in its ledger, and reconcile decides only a prompt the ledger left in flight"}}
	}
	if in.Target != l.Prompt || t.Verdict == OutcomeCompleted {
		// The plan describes another prompt's tail, or none is left open.
		return t
	}
	t.Dangling = st.DanglingCalls
	if t.Verdict != OutcomeInterrupted || st.Kind != PlanInterruptedPrompt {
		return t
	}
	for _, p := range st.Resend {
		if p.Source.UUID != "" && p.Source.Provenance == events.ProvenanceRealUser && p.Part.Kind == qwen.PartText {
			t.Resend = append(t.Resend, p)
		}
	}
	if !st.CanContinue {
		t.ResendVetoes = append(t.ResendVetoes, guards.Veto{Guard: "continuation", Reason: st.Reason})
	}
	if st.Guessed {
		for _, g := range st.Guesses {
			t.ResendVetoes = append(t.ResendVetoes, guards.Veto{Guard: "shape-guess", Reason: g})
		}
	}
	return t
}

// Describe is the turn's stable text form (scenarios print it).
func (t *Turn) Describe() string {
	if t == nil {
		return "turn: none\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "turn %s: %s", t.Prompt, t.Verdict)
	if t.Because != "" {
		fmt.Fprintf(&b, " (%s)", t.Because)
	}
	b.WriteString("\n")
	if t.End != "" {
		fmt.Fprintf(&b, "  turn_result: %s\n", t.End)
	}
	if t.Terminal != nil {
		fmt.Fprintf(&b, "  ledger: %s\n", t.Terminal.Describe())
	}
	for _, v := range t.Vetoes {
		fmt.Fprintf(&b, "  veto %s\n", v)
	}
	for _, p := range t.Resend {
		fmt.Fprintf(&b, "  resend: %q from %s (%s)\n", p.Part.Text, p.Source.UUID, p.Source.Origin)
	}
	for _, v := range t.ResendVetoes {
		fmt.Fprintf(&b, "  resend veto %s\n", v)
	}
	for _, c := range t.Dangling {
		fmt.Fprintf(&b, "  dangling: %s %s from %s (may have run)\n", orDash(c.ID), c.Name, orDash(c.Source.UUID))
	}
	return b.String()
}
