package machines

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tailproof/tailproof/guards"
)

// Prompt lifecycle states.
const (
	PAdmitted    = "admitted"
	PInFlight    = "in_flight"
	PCompleted   = "completed"
	PCancelled   = "cancelled"
	PError       = "error"
	PInterrupted = "interrupted"
)

// Prompt lifecycle events.
const (
	EvDispatch  = "dispatch"
	EvComplete  = "complete"
	EvCancel    = "cancel"
	EvFail      = "fail"
	EvInterrupt = "interrupt"
)

// LifecycleTable is one prompt's life: admitted (the in_flight ledger record
// is written at admission, queued or not), dispatched to the agent, then
// exactly one terminal. A queued prompt can be cancelled or flushed before it
// runs; a daemon crash leaves it in_flight until reconciliation interrupts it.
var LifecycleTable = Table{
	Name:    "prompt-lifecycle",
	Initial: PAdmitted,
	Transitions: []Transition{
		{Event: EvDispatch, Src: []string{PAdmitted}, Dst: PInFlight},
		{Event: EvComplete, Src: []string{PInFlight}, Dst: PCompleted},
		{Event: EvCancel, Src: []string{PAdmitted, PInFlight}, Dst: PCancelled},
		{Event: EvFail, Src: []string{PAdmitted, PInFlight}, Dst: PError},
		{Event: EvInterrupt, Src: []string{PAdmitted, PInFlight}, Dst: PInterrupted},
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
func (l *Lifecycle) State() string { return l.m.Current() }

// Fire applies event. A terminal event after a terminal returns an error
// wrapping ErrDuplicateTerminal; any other illegal event wraps ErrIllegal.
func (l *Lifecycle) Fire(ctx context.Context, event string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := l.m.Current()
	err := l.m.Fire(ctx, event, struct{}{})
	if err != nil && errors.Is(err, ErrIllegal) && IsTerminalState(before) && event != EvDispatch {
		return fmt.Errorf("machines: prompt already %s: %w", before, ErrDuplicateTerminal)
	}
	return err
}

// IsTerminalState reports whether s settles a prompt.
func IsTerminalState(s string) bool {
	switch s {
	case PCompleted, PCancelled, PError, PInterrupted:
		return true
	}
	return false
}
