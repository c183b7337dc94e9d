package tailproof

import (
	"context"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/reconcile"
	"github.com/tailproof/tailproof/machines/recovery"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// lastPrompt watches Status's one read of the ledger and the chain for the
// session's last prompt (recovery.TurnInput): the ledger's last admission
// and its terminal, and the state of its own turn_result on the chain. The
// core keeps only dangling prompts' turn_results, so a settled last prompt's
// is watched here.
type lastPrompt struct {
	core       *reconcile.Core
	ledgerRead bool
	prompt     string
	terminal   *ledger.Record
	turnResult string
}

// addLedger follows the ledger in file order: an admission makes its prompt
// the last one (a re-admission clears its terminal); the first terminal
// after it settles it.
func (l *lastPrompt) addLedger(r ledger.Record) {
	switch {
	case r.InFlight:
		if l.prompt != r.PromptID {
			l.prompt = strings.Clone(r.PromptID)
		}
		l.terminal = nil
	case r.PromptID == l.prompt && l.terminal == nil:
		t := r
		l.terminal = &t
	}
}

// StartChain and AddChainEvent feed the core and watch the last prompt's
// turn_result (chainFeed).
func (l *lastPrompt) StartChain() {
	l.turnResult = ""
	l.core.StartChain()
}

func (l *lastPrompt) AddChainEvent(e events.Event) error {
	if rec, ok := e.Body.(*qwen.Record); ok && l.prompt != "" && rec.Type == qwen.TypeSystem && rec.TurnResult != nil &&
		rec.TurnResult.PromptID == l.prompt && rec.TurnResult.State != l.turnResult {
		l.turnResult = strings.Clone(rec.TurnResult.State)
	}
	return l.core.AddChainEvent(e)
}

// input is the last prompt's facts once the chain is walked: without an
// admission in the ledger, the chain's last prompt identity (the core's
// target when nothing dangles) and its turn_result.
func (l *lastPrompt) input(rules reconcile.Rules, target string) recovery.TurnInput {
	in := recovery.TurnInput{Prompt: l.prompt, LedgerRead: l.ledgerRead, Admitted: l.prompt != "",
		Terminal: l.terminal, TurnResult: l.turnResult, Rules: rules.Name}
	if !in.Admitted {
		in.Prompt, in.TurnResult = target, l.core.TurnResult(target)
		return in
	}
	if in.Terminal != nil {
		return in
	}
	for _, d := range l.core.Ready().Decisions {
		if d.Target == l.prompt {
			in.Decided, in.Pending, in.Route, in.Vetoes = true, pendingOf(l.core.Ready(), d.Target), string(d.Route), d.Vetoes
		}
	}
	return in
}

// fillTurnParts gives the turn's resend parts the exact bytes fillPayloads
// read for the plan's: the turn's are a subsequence of the plan's, in order.
func fillTurnParts(st *RecoveryStatus) {
	t := st.Turn
	if t == nil {
		return
	}
	j := 0
	for i := range st.Resend {
		if j == len(t.Resend) {
			return
		}
		p := st.Resend[i]
		if q := &t.Resend[j]; q.Source.UUID == p.Source.UUID && q.Source.Pos == p.Source.Pos && q.Part.Text == p.Part.Text {
			q.Part.Raw = p.Part.Raw
			j++
		}
	}
}

// StatusSummary is the `turn` object of `tailproof status --harness qwen
// --json` (issue #15 item 7, ADR 0033): st's last prompt in the shape every
// harness prints (TurnSummary). Nil when the session names no prompt.
//
// harnessEnd is the prompt's own system/turn_result (Qwen Code 0.24.4:
// completed, cancelled or error — failed here; another state is unstated,
// the state kept as endReason); stamp is the ledger's terminal for it. A
// dangling call's ran is always false: Qwen Code writes a tool_result only
// when the call returns, and records nothing when it starts.
func StatusSummary(st RecoveryStatus) *TurnSummary {
	t := st.Turn
	if t == nil {
		return nil
	}
	s := &TurnSummary{ID: t.Prompt, Verdict: t.Verdict, Because: t.Because, Vetoes: vetoesJSON(t.Vetoes),
		HarnessEnd: turn.EndNone.String(), Resend: []ResendPrompt{}, ResendVetoes: vetoesJSON(t.ResendVetoes), DanglingCalls: []DanglingCall{}}
	switch t.End {
	case "":
	case "completed":
		s.HarnessEnd = turn.EndCompleted.String()
	case "cancelled":
		s.HarnessEnd = turn.EndCancelled.String()
	case "error":
		s.HarnessEnd = turn.EndFailed.String()
	default:
		s.HarnessEnd, s.EndReason = turn.EndUnstated.String(), t.End
	}
	for _, p := range t.Resend {
		s.Resend = append(s.Resend, ResendPrompt{Text: p.Part.Text, Line: p.Source.Pos.Line, PromptID: t.Prompt,
			UUID: p.Source.UUID, Origin: p.Source.Origin.String()})
	}
	for _, c := range t.Dangling {
		s.DanglingCalls = append(s.DanglingCalls, DanglingCall{ID: c.ID, Name: c.Name, Line: c.Source.Pos.Line})
	}
	if r := t.Terminal; r != nil {
		s.Stamp = &StampJSON{Terminal: string(r.Terminal), Code: r.Code, StopReason: r.StopReason, At: r.At}
	}
	return s
}

// QwenStatusTurn is the `turn` object `tailproof status --harness qwen`
// prints for st (ADR 0046). When the ledger-based status names the
// session's last prompt (ledgerRead and st.Turn set: the ledger's last
// admission, else the chain's last prompt identity), its object stands
// (ADR 0033): the reconcile core knows the admissions, terminals and
// markers. Otherwise — no ledger was read (ADR 0041), or the ledger read
// admitted nothing and no record on the chain names a prompt, as in a
// session of Qwen Code 0.24.4's interactive CLI, which writes neither a
// ledger record nor a daemonPromptId nor a turn_result — the transcript's
// last turn is decided from its own records through qwen.Harness and
// machines/turnverdict, keyed by its first uuid: completed, interrupted,
// or unknown with every guard's reason. Nil only when there is no turn at
// all: the transcript is missing, or holds no turn.
//
// A prompt the ledger settled is the last turn only while the transcript
// shows nothing after it (ADR 0050): when the transcript holds the prompt's
// own turn and, after it, turns the ledger knows nothing of — a cron or
// background notification turn of Qwen Code 0.24.4's daemon (no ledger
// record, no turn_result), the interactive CLI resumed on a daemon's
// session — the last of those is the session's last turn, decided from its
// own records as without a ledger. A prompt still in flight stays the last
// turn whatever follows it (ADR 0033: the reconcile core decides it, and a
// queued prompt has no record of its own), and so does a settled one whose
// turn the transcript does not show: nothing orders it against the
// transcript's turns.
func QwenStatusTurn(ctx context.Context, st RecoveryStatus, open OpenSession, ledgerRead, writerStopped bool) (*TurnSummary, error) {
	if ledgerRead && st.Turn != nil {
		if st.Turn.Terminal == nil || st.Transcript == TranscriptMissing {
			return StatusSummary(st), nil
		}
		last, err := turnAfterSettled(ctx, open, st.Turn.Prompt, writerStopped)
		if err != nil || last == nil {
			return StatusSummary(st), err
		}
		s := Summary(*last, nil)
		return &s, nil
	}
	if st.Transcript == TranscriptMissing {
		return StatusSummary(st), nil
	}
	rep, err := TurnStatus(ctx, open, TurnStatusOptions{Harness: qwen.Harness(), WriterStopped: writerStopped})
	if err != nil || rep.Last == nil {
		return nil, err
	}
	s := Summary(*rep.Last, nil)
	return &s, nil
}

// turnAfterSettled walks the transcript's turns and returns the decision on
// its last turn when that turn comes after the settled prompt's own (the
// last turn keyed by the prompt), else nil: the prompt's turn is the last,
// or the transcript never shows it.
func turnAfterSettled(ctx context.Context, open OpenSession, prompt string, writerStopped bool) (*turnverdict.Decision, error) {
	var last turnverdict.Decision
	seen, after := false, false
	err := eachTurn(ctx, open, qwen.Harness(), writerStopped, func(d turnverdict.Decision) error {
		if d.Turn == prompt {
			seen, after = true, false
		} else if seen {
			after = true
		}
		last = d
		return nil
	}, func(*events.Error) {})
	if err != nil || !after {
		return nil, err
	}
	return &last, nil
}
