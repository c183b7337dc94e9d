package turnverdict

import (
	"context"
	"iter"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/guards/turnrules"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/turnfold"
)

// Verdict is what tailproof says of one turn.
type Verdict string

const (
	Completed   Verdict = "completed"
	Interrupted Verdict = "interrupted"
	Unknown     Verdict = "unknown"
)

// States and events of the verdict machine.
const (
	StateOpen        = "open"
	StateCompleted   = string(Completed)
	StateInterrupted = string(Interrupted)
	StateUnknown     = string(Unknown)

	EvComplete  = "complete"
	EvInterrupt = "interrupt"
	EvGiveUp    = "give-up"
)

// Table is the verdict machine: a turn's evidence is tried for completed,
// then for interrupted; when the guards refuse both it is unknown, with
// every veto.
var Table = machines.Table{
	Name:    "turn-verdict",
	Initial: StateOpen,
	Transitions: []machines.Transition{
		{Event: EvComplete, Src: []string{StateOpen}, Dst: StateCompleted},
		{Event: EvInterrupt, Src: []string{StateOpen}, Dst: StateInterrupted},
		{Event: EvGiveUp, Src: []string{StateOpen}, Dst: StateUnknown},
	},
}

func guardFor(ev string) guards.Guard[*turnfold.Evidence] {
	switch ev {
	case EvComplete:
		return turnrules.Completed
	case EvInterrupt:
		return turnrules.Interrupted
	}
	return nil
}

// Options are the decider's inputs besides the file.
type Options struct {
	// WriterStopped asserts that the process that wrote the file is gone.
	// tailproof cannot know it from the file; without it the file's last
	// turn, when it has no end record, stays unknown (it may be running).
	WriterStopped bool
}

// Decision is the verdict on one turn and what a resume would need.
type Decision struct {
	// Turn is the turn's key (the harness's turn id, else its prompt id or
	// first record uuid, else "line:N"): what a sidecar ledger keys on.
	Turn  string
	Index int
	Start events.Position
	Last  events.Position
	// Verdict and the rule that gave it (the guard whose allowance decided
	// an interrupted verdict), or, for unknown, every veto.
	Verdict Verdict
	Because string
	Vetoes  []guards.Veto
	// HarnessEnd and EndReason are the harness's own end record, if any.
	HarnessEnd turn.End
	EndReason  string
	// Resend is what a resume would send again: an interrupted turn's
	// prompts of a person, in order — never injected, meta, hook, command,
	// notification or scheduler input. ResendVetoes say why a resume must
	// not send them on its own (the prompts are still listed).
	Resend       []turnfold.Prompt
	ResendVetoes []guards.Veto
	// Dangling are the turn's tool calls without a result. Each may have run
	// (Ran: the harness recorded that it did); a resume must not presume
	// either way.
	Dangling []turnfold.Call
	Trace    []machines.Step
	Notes    []string
}

// Decide gives the verdict on one turn.
func Decide(t *turnfold.Turn, superseded bool, o Options) Decision {
	m := machines.New(Table, guardFor)
	return decide(m, t, superseded, o)
}

func decide(m *machines.Machine[*turnfold.Evidence], t *turnfold.Turn, superseded bool, o Options) Decision {
	ev := &turnfold.Evidence{Turn: t, Superseded: superseded, WriterStopped: o.WriterStopped}
	ctx := context.Background()
	d := Decision{Turn: t.Key(), Index: t.Index, Start: t.Start, Last: t.Last,
		HarnessEnd: t.End, EndReason: t.EndReason, Dangling: t.Dangling(), Notes: t.Notes}
	if t.Torn != nil {
		d.Notes = append(d.Notes, "torn final fragment at "+t.Torn.String()+" discarded")
	}
	for _, p := range t.DamageAfter {
		d.Notes = append(d.Notes, "undecodable line after the turn's end at "+p.String()+": it may have been the next prompt")
	}
	var vetoes []guards.Veto
	switch {
	case m.Fire(ctx, EvComplete, ev) == nil:
		d.Verdict, d.Because = Completed, "completion-recorded"
	case m.Fire(ctx, EvInterrupt, ev) == nil:
		d.Verdict, d.Because = Interrupted, interruptRule(ev)
	default:
		_ = m.Fire(ctx, EvGiveUp, ev)
		d.Verdict = Unknown
	}
	d.Trace = m.Trace()
	if d.Verdict == Unknown {
		for _, s := range d.Trace {
			vetoes = append(vetoes, s.Vetoes...)
		}
		d.Vetoes = dedupe(vetoes)
	}
	if d.Verdict == Interrupted {
		for _, p := range t.Prompts {
			if p.Source.Resendable() {
				d.Resend = append(d.Resend, p)
			}
		}
		d.ResendVetoes = turnrules.Resend.Check(ev)
	}
	return d
}

func interruptRule(ev *turnfold.Evidence) string {
	switch {
	case len(turnrules.AbortRecorded.Check(ev)) == 0:
		return "abort-recorded"
	case len(turnrules.InterruptMarker.Check(ev)) == 0:
		return "interrupt-marker"
	}
	return "unfinished-work"
}

func dedupe(vs []guards.Veto) []guards.Veto {
	var out []guards.Veto
	seen := map[guards.Veto]bool{}
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Decider decides the turns of one file as its acts stream in: a turn is
// decided when the next one opens (superseded) and the last at Finish. It
// holds one turn's evidence at a time.
type Decider struct {
	fold *turnfold.Fold
	m    *machines.Machine[*turnfold.Evidence]
	opts Options
}

// NewDecider returns a decider for one file.
func NewDecider(o Options) *Decider {
	return &Decider{fold: turnfold.New(), m: machines.New(Table, guardFor), opts: o}
}

// Add folds one act; it returns the decision on the turn that act closed.
func (d *Decider) Add(a turn.Act) (Decision, bool) {
	t := d.fold.Add(a)
	if t == nil {
		return Decision{}, false
	}
	d.m.Reset(guardFor)
	return decide(d.m, t, true, d.opts), true
}

// Finish decides the file's last turn (false when the file held none).
func (d *Decider) Finish() (Decision, bool) {
	t := d.fold.Finish()
	if t == nil {
		return Decision{}, false
	}
	d.m.Reset(guardFor)
	return decide(d.m, t, false, d.opts), true
}

// DecideAll decides every turn of a stream of acts (turn.Read's output). It
// stops at the first read error.
func DecideAll(acts iter.Seq2[turn.Act, error], o Options) ([]Decision, error) {
	d := NewDecider(o)
	var out []Decision
	for a, err := range acts {
		if err != nil {
			return out, err
		}
		if dec, ok := d.Add(a); ok {
			out = append(out, dec)
		}
	}
	if dec, ok := d.Finish(); ok {
		out = append(out, dec)
	}
	return out, nil
}

// Describe prints the decision in the stable multi-line form the scenario
// files use.
func (d Decision) Describe() string {
	var b strings.Builder
	b.WriteString("turn " + strconv.Itoa(d.Index) + " " + d.Turn + " (" + d.Start.String() + " .. line " + strconv.Itoa(d.Last.Line) + "): " + string(d.Verdict))
	if d.Because != "" {
		b.WriteString(" by " + d.Because)
	}
	if d.HarnessEnd != turn.EndNone {
		b.WriteString("; harness end " + d.HarnessEnd.String())
		if d.EndReason != "" {
			b.WriteString(" (" + d.EndReason + ")")
		}
	}
	b.WriteByte('\n')
	for _, v := range d.Vetoes {
		b.WriteString("  veto " + v.String() + "\n")
	}
	for _, p := range d.Resend {
		b.WriteString("  resend " + p.Pos.String() + " " + strconv.Quote(p.Text) + "\n")
	}
	for _, v := range d.ResendVetoes {
		b.WriteString("  resend-veto " + v.String() + "\n")
	}
	for _, c := range d.Dangling {
		ran := "may have run"
		if c.Ran {
			ran = "ran"
		}
		b.WriteString("  dangling " + c.ID + " " + c.Name + " (" + ran + ")\n")
	}
	for _, n := range d.Notes {
		b.WriteString("  note " + n + "\n")
	}
	return b.String()
}
