package machines

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/looplab/fsm"

	"github.com/tailproof/tailproof/guards"
)

// Transition is one row of a machine's transition table.
type Transition struct {
	Event string
	Src   []string
	Dst   string
}

// Table is a machine's listed transition table.
type Table struct {
	Name        string
	Initial     string
	Transitions []Transition
}

// Mermaid renders the table as a Mermaid state diagram. The output is sorted
// and deterministic, so docs embed it and tests compare it byte for byte.
func (t Table) Mermaid() string {
	var rows []string
	for _, tr := range t.Transitions {
		for _, s := range tr.Src {
			rows = append(rows, fmt.Sprintf("    %s --> %s: %s", s, tr.Dst, tr.Event))
		}
	}
	sort.Strings(rows)
	return "stateDiagram-v2\n    [*] --> " + t.Initial + "\n" + strings.Join(rows, "\n") + "\n"
}

// Dot renders the table as a Graphviz digraph.
func (t Table) Dot() string {
	var rows []string
	for _, tr := range t.Transitions {
		for _, s := range tr.Src {
			rows = append(rows, fmt.Sprintf("    %q -> %q [label=%q];", s, tr.Dst, tr.Event))
		}
	}
	sort.Strings(rows)
	return "digraph " + fmt.Sprintf("%q", t.Name) + " {\n    " + fmt.Sprintf("%q", t.Initial) + " [shape=doublecircle];\n" + strings.Join(rows, "\n") + "\n}\n"
}

// VetoError is returned by Fire when guards refused a transition.
type VetoError struct {
	Event, Src, Dst string
	Vetoes          []guards.Veto
}

func (v *VetoError) Error() string {
	parts := make([]string, len(v.Vetoes))
	for i, x := range v.Vetoes {
		parts[i] = x.String()
	}
	return fmt.Sprintf("machines: %s %s->%s vetoed: %s", v.Event, v.Src, v.Dst, strings.Join(parts, "; "))
}

// ErrIllegal classifies an event fired from a state where the table has no
// such transition (or no such event at all). It is never a silent no-op.
var ErrIllegal = errors.New("illegal transition")

// Step records one transition attempt for a trace.
type Step struct {
	Event, Src, Dst string
	Vetoes          []guards.Veto // non-empty when refused
}

func (s Step) Describe() string {
	if len(s.Vetoes) > 0 {
		parts := make([]string, len(s.Vetoes))
		for i, v := range s.Vetoes {
			parts[i] = v.String()
		}
		return fmt.Sprintf("%s: %s -x-> %s vetoed [%s]", s.Event, s.Src, s.Dst, strings.Join(parts, "; "))
	}
	return s.Event + ": " + s.Src + " --> " + s.Dst
}

// TraceLimit is how many of its most recent steps a machine keeps. A
// decision's machine takes a handful of steps; a long-lived one (the live
// journal's Admission, one per served session) fires on every live event
// for as long as the process runs, so its trace is a ring of the last
// TraceLimit steps rather than a slice that grows without bound.
const TraceLimit = 256

// Machine runs a Table on looplab/fsm. Every Fire is serialized by one mutex
// (looplab v1.0.3 races between concurrent Event calls), runs with a context
// that cannot be cancelled (a cancelled context wedges looplab for good), and
// consults the guard hook before the transition, collecting every veto.
type Machine[E any] struct {
	mu     sync.Mutex
	table  Table
	f      *fsm.FSM
	guards func(event string) guards.Guard[E]
	// trace is a ring of at most TraceLimit steps; once full, head is the
	// oldest step's index and the next record overwrites it.
	trace   []Step
	head    int
	dropped int
}

// New builds a machine from table. guardsFor returns the guard for an event
// (nil: no guard).
func New[E any](table Table, guardsFor func(event string) guards.Guard[E]) *Machine[E] {
	m := &Machine[E]{table: table, guards: guardsFor}
	evs := make(fsm.Events, len(table.Transitions))
	for i, tr := range table.Transitions {
		evs[i] = fsm.EventDesc{Name: tr.Event, Src: tr.Src, Dst: tr.Dst}
	}
	m.f = fsm.NewFSM(table.Initial, evs, fsm.Callbacks{
		"before_event": func(_ context.Context, e *fsm.Event) {
			if m.guards == nil || len(e.Args) == 0 {
				return
			}
			g := m.guards(e.Event)
			if g == nil {
				return
			}
			ev, _ := e.Args[0].(E)
			if vs := g.Check(ev); len(vs) > 0 {
				e.Cancel(&VetoError{Event: e.Event, Src: e.Src, Dst: e.Dst, Vetoes: vs})
			}
		},
	})
	return m
}

// Reset returns m to its table's initial state with an empty trace and
// guardsFor as its guards, so a caller deciding many times can reuse one
// machine instead of building looplab's tables per decision. A Reset machine
// behaves exactly as a New one.
func (m *Machine[E]) Reset(guardsFor func(event string) guards.Guard[E]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.f.SetState(m.table.Initial)
	m.guards = guardsFor
	clear(m.trace) // drop the vetoes' references, not only the length
	m.trace, m.head, m.dropped = m.trace[:0], 0, 0
}

// record keeps s as the most recent step, overwriting the oldest once the
// ring holds TraceLimit steps.
func (m *Machine[E]) record(s Step) {
	if n := len(m.trace); n < TraceLimit {
		if n == cap(m.trace) { // grow by doubling, never past the limit
			grown := make([]Step, n, min(max(2*n, 4), TraceLimit))
			copy(grown, m.trace)
			m.trace = grown
		}
		m.trace = append(m.trace, s)
		return
	}
	m.trace[m.head] = s
	m.head = (m.head + 1) % TraceLimit
	m.dropped++
}

// Last returns the most recent step of the trace (ok=false when none).
func (m *Machine[E]) Last() (s Step, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.trace) == 0 {
		return Step{}, false
	}
	return m.trace[(m.head+len(m.trace)-1)%len(m.trace)], true
}

// Current is the machine's state.
func (m *Machine[E]) Current() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Current()
}

// Table returns the machine's transition table.
func (m *Machine[E]) Table() Table { return m.table }

// Trace returns a copy of the transitions attempted so far, oldest first:
// every one of them while there were at most TraceLimit, else the last
// TraceLimit (Dropped counts the older ones no longer kept).
func (m *Machine[E]) Trace() []Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Step, 0, len(m.trace))
	out = append(out, m.trace[m.head:]...)
	return append(out, m.trace[:m.head]...)
}

// Dropped is how many of the oldest steps the trace no longer holds.
func (m *Machine[E]) Dropped() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped
}

// Fire attempts event with evidence. It returns nil on a transition, a
// *VetoError when guards refused (the state is unchanged), or an error
// wrapping ErrIllegal when the table does not allow event from here.
func (m *Machine[E]) Fire(ctx context.Context, event string, evidence E) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	src := m.f.Current()
	dst := m.dstFor(event, src)
	err := m.f.Event(context.WithoutCancel(ctx), event, evidence)
	if err == nil {
		m.record(Step{Event: event, Src: src, Dst: dst})
		return nil
	}
	return m.refused(err, event, src, dst)
}

// refused is Fire's answer to an error of looplab's Event. Each errors.As
// target escapes to the heap where it is declared, so each is declared only
// when the one before did not match, and a transition (no error) pays for
// none of them.
func (m *Machine[E]) refused(err error, event, src, dst string) error {
	var canceled fsm.CanceledError
	if errors.As(err, &canceled) {
		var v *VetoError
		if errors.As(canceled.Err, &v) {
			m.record(Step{Event: event, Src: src, Dst: dst, Vetoes: v.Vetoes})
			return v
		}
		return err
	}
	var noop fsm.NoTransitionError
	if errors.As(err, &noop) && noop.Err == nil {
		m.record(Step{Event: event, Src: src, Dst: dst})
		return nil
	}
	var invalid fsm.InvalidEventError
	var unknown fsm.UnknownEventError
	if errors.As(err, &invalid) || errors.As(err, &unknown) {
		return fmt.Errorf("machines: %s: event %q from state %q: %w", m.table.Name, event, src, ErrIllegal)
	}
	return err
}

func (m *Machine[E]) dstFor(event, src string) string {
	for _, tr := range m.table.Transitions {
		if tr.Event != event {
			continue
		}
		for _, s := range tr.Src {
			if s == src {
				return tr.Dst
			}
		}
	}
	return "?"
}
