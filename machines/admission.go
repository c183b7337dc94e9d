package machines

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/ownership"
)

// AdmissionState is an admission machine state.
type AdmissionState string

// Admission states.
const (
	AdmFree  AdmissionState = "free"  // no execution class owns the session
	AdmOwned AdmissionState = "owned" // some live turn owns it
)

// AdmissionEvent is an admission machine event.
type AdmissionEvent string

// Admission events.
const (
	EvAcquire  AdmissionEvent = "acquire"  // a live turn started (any class)
	EvRelease  AdmissionEvent = "release"  // the last live turn settled
	EvContinue AdmissionEvent = "continue" // a recovery continuation asks to start
)

// AdmissionTable is the admission machine. A continuation is a transition
// like any other live turn's start, but the only one that is guarded: live
// turns are facts reported by the runtime, a continuation is a request.
// Continue is listed from owned too so a refusal is a veto that names the
// owner, not an illegal-transition error.
func AdmissionTable() Table {
	return Table{Name: "admission", Initial: string(AdmFree), Transitions: []Transition{
		{Event: string(EvAcquire), Src: []string{string(AdmFree), string(AdmOwned)}, Dst: string(AdmOwned)},
		{Event: string(EvRelease), Src: []string{string(AdmOwned)}, Dst: string(AdmFree)},
		{Event: string(EvContinue), Src: []string{string(AdmFree), string(AdmOwned)}, Dst: string(AdmOwned)},
	}}
}

// AdmissionEvidence is what the admission guards read: the live owners at
// the instant of the request, and — when the consumer has one — the
// recovery status's answer for the session.
type AdmissionEvidence struct {
	Request string
	Owners  []ownership.Owner
	// Recovery is the recovery status's continuation answer; nil when the
	// request does not come from a recovery plan.
	Recovery *RecoveryGate
}

// RecoveryGate is the part of a recovery status admission checks.
type RecoveryGate struct {
	CanContinue bool
	Reason      string
}

// NoActiveTurn is THE admission predicate: a continuation may start only when
// no execution class owns the session. Every consumer (library, CLI, bus, UI)
// gates on this guard, directly or through Admission, so none of them can
// offer an action admission would refuse (or, worse, use to supersede healthy
// automatic work).
var NoActiveTurn guards.Guard[*AdmissionEvidence] = guards.Func("no-active-turn", func(e *AdmissionEvidence) string {
	if len(e.Owners) == 0 {
		return ""
	}
	names := make([]string, len(e.Owners))
	for i, o := range e.Owners {
		names[i] = o.Describe()
	}
	return "the session is owned by " + strings.Join(names, ", ")
})

// RecoveryAllows refuses a continuation the recovery status did not allow.
var RecoveryAllows guards.Guard[*AdmissionEvidence] = guards.Func("recovery-plan", func(e *AdmissionEvidence) string {
	if e.Recovery == nil || e.Recovery.CanContinue {
		return ""
	}
	if e.Recovery.Reason == "" {
		return "the recovery status does not allow a continuation"
	}
	return e.Recovery.Reason
})

// ErrRefused classifies a refused continuation; the error is a *RefusedError.
var ErrRefused = errors.New("continuation refused")

// RefusedError says why a continuation was not admitted, naming the owner.
type RefusedError struct {
	Request string
	Owner   ownership.Owner // Class None when the refusal was not about ownership
	Vetoes  []guards.Veto
}

func (r *RefusedError) Error() string {
	parts := make([]string, len(r.Vetoes))
	for i, v := range r.Vetoes {
		parts[i] = v.String()
	}
	return fmt.Sprintf("machines: continuation %s refused: %s", r.Request, strings.Join(parts, "; "))
}

func (r *RefusedError) Unwrap() error { return ErrRefused }

// ContinueRequest is one request to start a recovery continuation.
type ContinueRequest struct {
	// ID becomes the admitted continuation's foreground turn id.
	ID       string
	Recovery *RecoveryGate
}

// Admission serializes a session's live ownership and its continuation
// requests: the ownership fold and the machine move together under one lock,
// so of any number of concurrent requests at most one is admitted, and an
// admitted continuation owns the session (as a foreground prompt) until its
// settle is observed.
type Admission struct {
	mu    sync.Mutex
	own   ownership.State
	m     *Machine[*AdmissionEvidence]
	guard guards.Guard[*AdmissionEvidence]
}

// NewAdmission returns a free session's admission. extra guards run after
// NoActiveTurn and RecoveryAllows on every continue request.
func NewAdmission(extra ...guards.Guard[*AdmissionEvidence]) *Admission {
	g := guards.All(append([]guards.Guard[*AdmissionEvidence]{NoActiveTurn, RecoveryAllows}, extra...)...)
	return &Admission{guard: g, m: New(AdmissionTable(), func(event string) guards.Guard[*AdmissionEvidence] {
		if event == string(EvContinue) {
			return g
		}
		return nil
	})}
}

// Observe folds one live event from the runtime. An event that does not fit
// the live state is refused (ownership's errors) and changes nothing.
func (a *Admission) Observe(ctx context.Context, ev ownership.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.own.Apply(ev); err != nil {
		return fmt.Errorf("machines: admission: %w", err)
	}
	return a.sync(ctx)
}

// sync moves the machine to match the ownership fold.
func (a *Admission) sync(ctx context.Context) error {
	switch {
	case !a.own.Free():
		return a.m.Fire(ctx, string(EvAcquire), nil)
	case AdmissionState(a.m.Current()) == AdmOwned:
		return a.m.Fire(ctx, string(EvRelease), nil)
	}
	return nil
}

// Continue asks to start a recovery continuation. nil means admitted: the
// caller's continuation now owns the session as foreground turn req.ID and
// must report its settle through Observe. A refusal is a *RefusedError
// (errors.Is ErrRefused) whose vetoes name the owner.
func (a *Admission) Continue(ctx context.Context, req ContinueRequest) error {
	if req.ID == "" {
		return fmt.Errorf("machines: admission: %w: a continuation needs an id", ownership.ErrInvalidEvent)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ev := &AdmissionEvidence{Request: req.ID, Owners: a.own.Owners(), Recovery: req.Recovery}
	err := a.m.Fire(ctx, string(EvContinue), ev)
	var v *VetoError
	if errors.As(err, &v) {
		return &RefusedError{Request: req.ID, Owner: a.own.Owner(), Vetoes: v.Vetoes}
	}
	if err != nil {
		return err
	}
	if err := a.own.Apply(ownership.Event{Class: ownership.Foreground, Phase: ownership.Start, Turn: req.ID}); err != nil {
		// Unreachable while the guard holds (a live id means an owner);
		// resync so the machine never claims an owner the fold lacks.
		_ = a.sync(ctx)
		return fmt.Errorf("machines: admission: %w", err)
	}
	return nil
}

// Check evaluates the admission predicate now without acting: what a status
// report or a UI shows before offering "continue".
func (a *Admission) Check(req ContinueRequest) []guards.Veto {
	a.mu.Lock()
	defer a.mu.Unlock()
	ev := &AdmissionEvidence{Request: req.ID, Owners: a.own.Owners(), Recovery: req.Recovery}
	return a.guard.Check(ev)
}

// Owners lists the live owners (highest priority first).
func (a *Admission) Owners() []ownership.Owner {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.own.Owners()
}

// Current is the machine's state (AdmFree or AdmOwned).
func (a *Admission) Current() AdmissionState { return AdmissionState(a.m.Current()) }

// Trace is the transitions attempted, refusals included: the last
// TraceLimit of them, since an admission lives as long as its session.
func (a *Admission) Trace() []Step { return a.m.Trace() }
