package machines

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tailproof/tailproof/guards"
)

// LifecycleState is a prompt lifecycle state.
type LifecycleState string

// Prompt lifecycle states.
const (
	PAdmitted    LifecycleState = "admitted"
	PInFlight    LifecycleState = "in_flight"
	PCompleted   LifecycleState = "completed"
	PCancelled   LifecycleState = "cancelled"
	PError       LifecycleState = "error"
	PInterrupted LifecycleState = "interrupted"
)

// LifecycleEvent is a prompt lifecycle event.
type LifecycleEvent string

// Prompt lifecycle events.
const (
	EvDispatch  LifecycleEvent = "dispatch"
	EvComplete  LifecycleEvent = "complete"
	EvCancel    LifecycleEvent = "cancel"
	EvFail      LifecycleEvent = "fail"
	EvInterrupt LifecycleEvent = "interrupt"
)

// LifecycleTable is one prompt's life: admitted (the in_flight ledger record
// is written at admission, queued or not), dispatched to the agent, then
// exactly one terminal. A queued prompt can be cancelled or flushed before it
// runs; a daemon crash leaves it in_flight until reconciliation interrupts it.
var LifecycleTable = Table{
	Name:    "prompt-lifecycle",
	Initial: string(PAdmitted),
	Transitions: []Transition{
		{Event: string(EvDispatch), Src: []string{string(PAdmitted)}, Dst: string(PInFlight)},
		{Event: string(EvComplete), Src: []string{string(PInFlight)}, Dst: string(PCompleted)},
		{Event: string(EvCancel), Src: []string{string(PAdmitted), string(PInFlight)}, Dst: string(PCancelled)},
		{Event: string(EvFail), Src: []string{string(PAdmitted), string(PInFlight)}, Dst: string(PError)},
		{Event: string(EvInterrupt), Src: []string{string(PAdmitted), string(PInFlight)}, Dst: string(PInterrupted)},
	},
}

// ErrDuplicateTerminal is returned for a second terminal of a prompt, as the
// reference's per-prompt publish latch (terminalPublished) suppresses it.
var ErrDuplicateTerminal = errors.New("duplicate terminal")

// Lifecycle is one prompt's lifecycle machine.
type Lifecycle struct {
	mu sync.Mutex
	m  *Machine[struct{}]
}

// NewLifecycle starts a prompt in admitted.
func NewLifecycle() *Lifecycle {
	return &Lifecycle{m: New[struct{}](LifecycleTable, func(string) guards.Guard[struct{}] { return nil })}
}

// State is the prompt's current state.
func (l *Lifecycle) State() LifecycleState { return LifecycleState(l.m.Current()) }

// Fire applies event. A terminal event after a terminal returns an error
// wrapping ErrDuplicateTerminal; any other illegal event wraps ErrIllegal.
func (l *Lifecycle) Fire(ctx context.Context, event LifecycleEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := LifecycleState(l.m.Current())
	err := l.m.Fire(ctx, string(event), struct{}{})
	if err != nil && errors.Is(err, ErrIllegal) && IsTerminalState(before) && event != EvDispatch {
		return fmt.Errorf("machines: prompt already %s: %w", before, ErrDuplicateTerminal)
	}
	return err
}

// IsTerminalState reports whether s settles a prompt.
func IsTerminalState(s LifecycleState) bool {
	switch s {
	case PCompleted, PCancelled, PError, PInterrupted:
		return true
	}
	return false
}
