package machines

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/guards"
)

func TestLifecycleRejectsSecondTerminal(t *testing.T) {
	ctx := context.Background()
	l := NewLifecycle()
	if err := l.Fire(ctx, EvDispatch); err != nil {
		t.Fatal(err)
	}
	if err := l.Fire(ctx, EvComplete); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []LifecycleEvent{EvComplete, EvCancel, EvFail, EvInterrupt} {
		if err := l.Fire(ctx, ev); !errors.Is(err, ErrDuplicateTerminal) {
			t.Errorf("%s after completed: got %v, want ErrDuplicateTerminal", ev, err)
		}
	}
	if l.State() != PCompleted {
		t.Fatalf("state moved to %s", l.State())
	}
}

func TestQueuedPromptCanBeCancelled(t *testing.T) {
	l := NewLifecycle()
	if err := l.Fire(context.Background(), EvCancel); err != nil || l.State() != PCancelled {
		t.Fatalf("cancel from admitted: %v %s", err, l.State())
	}
}

func TestIllegalTransitionIsAnError(t *testing.T) {
	m := NewReconcile(DefaultReconcileGuards())
	err := m.Fire(context.Background(), EvCommit, &guards.Evidence{})
	if !errors.Is(err, ErrIllegal) {
		t.Fatalf("commit from loaded: got %v, want ErrIllegal", err)
	}
	if m.Current() != RLoaded {
		t.Fatalf("state changed to %s", m.Current())
	}
}

func TestVetoKeepsStateAndNamesGuard(t *testing.T) {
	m := NewReconcile(ReferenceReconcileGuards())
	err := m.Fire(context.Background(), EvSelect, &guards.Evidence{Dangling: []string{"a", "b"}})
	var v *VetoError
	if !errors.As(err, &v) || len(v.Vetoes) != 1 || v.Vetoes[0].Guard != "single-dangling" {
		t.Fatalf("got %v", err)
	}
	if m.Current() != RLoaded {
		t.Fatalf("state changed to %s", m.Current())
	}
}

func TestCancelledContextDoesNotWedge(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := NewReconcile(DefaultReconcileGuards())
	if err := m.Fire(ctx, EvNothing, &guards.Evidence{}); err != nil {
		t.Fatal(err)
	}
	if m.Current() != RNone {
		t.Fatal(m.Current())
	}
}

// Every transition of every table is an edge of its diagram, and nothing else is.
func TestDiagramsListEveryTransition(t *testing.T) {
	for _, table := range []Table{ReconcileTable, LifecycleTable} {
		var want []string
		for _, tr := range table.Transitions {
			for _, src := range tr.Src {
				want = append(want, "    "+src+" --> "+tr.Dst+": "+tr.Event)
			}
		}
		lines := strings.Split(strings.TrimSpace(table.Mermaid()), "\n")
		if lines[0] != "stateDiagram-v2" || strings.TrimSpace(lines[1]) != "[*] --> "+table.Initial {
			t.Fatalf("%s: header %q", table.Name, lines[:2])
		}
		got := lines[2:]
		sort.Strings(want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s diagram (-want +got):\n%s", table.Name, d)
		}
		if dot := table.Dot(); strings.Count(dot, " -> ") != len(want) {
			t.Errorf("%s dot has %d edges, want %d", table.Name, strings.Count(dot, " -> "), len(want))
		}
	}
}

// A Reset machine decides exactly as a new one: same states, same trace,
// and nothing of the previous decision left in it.
func TestResetBehavesAsNew(t *testing.T) {
	ctx := context.Background()
	run := func(m *Machine[*guards.Evidence]) []Step {
		ev := &guards.Evidence{Dangling: []string{"a", "b"}}
		if err := m.Fire(ctx, EvSelect, ev); err == nil {
			t.Fatal("select with two dangling passed the reference guard")
		}
		if err := m.Fire(ctx, EvGiveUp, ev); err != nil {
			t.Fatal(err)
		}
		return m.Trace()
	}
	fresh := NewReconcile(ReferenceReconcileGuards())
	want := run(fresh)
	used := NewReconcile(DefaultReconcileGuards())
	if err := used.Fire(ctx, EvNothing, &guards.Evidence{}); err != nil || used.Current() != RNone {
		t.Fatalf("nothing-dangling: %v %s", err, used.Current())
	}
	used.Reset(ReferenceReconcileGuards().For)
	if used.Current() != RLoaded || len(used.Trace()) != 0 {
		t.Fatalf("after Reset: state %s, trace %v", used.Current(), used.Trace())
	}
	if diff := cmp.Diff(want, run(used)); diff != "" {
		t.Fatalf("reset machine differs from a new one (-new +reset):\n%s", diff)
	}
	if s, ok := used.Last(); !ok || s.Dst != RUnknown {
		t.Fatalf("Last = %+v, %v", s, ok)
	}
}
