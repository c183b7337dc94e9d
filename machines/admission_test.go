package machines

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/projections/ownership"
)

// Scenario notation (testdata/admission/*.txt):
//
//	observe                  live events, one per line ("<class> <phase> <turn>")
//	continue id=c1 [refuse-plan=reason_with_underscores]   a continuation request (refuse-plan:
//	                         the recovery status said it cannot continue)
//	state                    machine state and live owners
//	table                    the transition table as Mermaid
//	reset
func TestAdmissionScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/admission", func(t *testing.T, path string) {
		a := NewAdmission()
		ctx := context.Background()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "reset":
				a = NewAdmission()
				return ""
			case "observe":
				var b strings.Builder
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					ev, err := ownership.ParseEvent(line)
					if err == nil {
						err = a.Observe(ctx, ev)
					}
					if err != nil {
						fmt.Fprintf(&b, "%s: %v\n", line, err)
						continue
					}
					fmt.Fprintf(&b, "%s: ok -> %s\n", line, a.Current())
				}
				return b.String()
			case "continue":
				req := ContinueRequest{}
				for _, arg := range d.CmdArgs {
					switch arg.Key {
					case "id":
						req.ID = arg.Vals[0]
					case "refuse-plan":
						req.Recovery = &RecoveryGate{Reason: strings.ReplaceAll(arg.Vals[0], "_", " ")}
					default:
						t.Fatalf("unknown argument %q", arg.Key)
					}
				}
				var b strings.Builder
				if vs := a.Check(req); len(vs) > 0 {
					fmt.Fprintf(&b, "check: %d veto(es)\n", len(vs))
				} else {
					b.WriteString("check: admissible\n")
				}
				err := a.Continue(ctx, req)
				var r *RefusedError
				switch {
				case err == nil:
					fmt.Fprintf(&b, "admitted %s -> %s (owner %s)\n", req.ID, a.Current(), ownersText(a.Owners()))
				case errors.As(err, &r):
					fmt.Fprintf(&b, "refused %s (owner %s)\n", req.ID, r.Owner.Describe())
					for _, v := range r.Vetoes {
						fmt.Fprintf(&b, "  veto %s\n", v)
					}
				default:
					fmt.Fprintf(&b, "error: %v\n", err)
				}
				return b.String()
			case "state":
				return fmt.Sprintf("state: %s\nowners: %s\n", a.Current(), ownersText(a.Owners()))
			case "table":
				return AdmissionTable().Mermaid()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func ownersText(os []ownership.Owner) string {
	if len(os) == 0 {
		return "none"
	}
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = o.Describe()
	}
	return strings.Join(s, ", ")
}

// Of N concurrent continue requests on a free session exactly one is
// admitted; every other one is refused with a reason naming the admitted
// continuation as the owner. Run with -race.
func TestAdmissionConcurrentContinues(t *testing.T) {
	const n = 64
	for round := 0; round < 20; round++ {
		a := NewAdmission()
		var (
			wg       sync.WaitGroup
			start    = make(chan struct{})
			errs     = make([]error, n)
			admitted = make(chan string, n)
		)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				id := fmt.Sprintf("c%d", i)
				errs[i] = a.Continue(context.Background(), ContinueRequest{ID: id})
				if errs[i] == nil {
					admitted <- id
				}
			}(i)
		}
		close(start)
		wg.Wait()
		close(admitted)
		var winners []string
		for id := range admitted {
			winners = append(winners, id)
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: admitted %v, want exactly one", round, winners)
		}
		want := "foreground_prompt " + winners[0]
		for i, err := range errs {
			if err == nil {
				continue
			}
			var r *RefusedError
			if !errors.As(err, &r) || !errors.Is(err, ErrRefused) {
				t.Fatalf("request %d: %v is not a refusal", i, err)
			}
			if r.Owner.Describe() != want || !strings.Contains(err.Error(), "owned by "+want) {
				t.Fatalf("request %d: refusal %q does not name the owner %q", i, err, want)
			}
		}
		if got := a.Owners(); len(got) != 1 || got[0].Describe() != want {
			t.Fatalf("owners %v", got)
		}
	}
}

// Concurrent live events and continue requests: whatever the interleaving, a
// continuation is admitted only at an instant nothing else owned the session,
// and the machine state always matches the fold.
func TestAdmissionInterleavingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := NewAdmission()
		ctx := context.Background()
		live := map[string]ownership.Class{}
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			if rapid.Bool().Draw(t, "continue") {
				id := fmt.Sprintf("c%d", i)
				err := a.Continue(ctx, ContinueRequest{ID: id})
				if (err == nil) != (len(live) == 0) {
					t.Fatalf("continue with owners %v: %v", live, err)
				}
				if err == nil {
					live[id] = ownership.Foreground
				}
			} else {
				class := rapid.SampledFrom([]ownership.Class{ownership.Foreground, ownership.Notification,
					ownership.Cron, ownership.Goal, ownership.Mutation}).Draw(t, "class")
				turn := rapid.SampledFrom([]string{"t1", "t2", "c0", "c1"}).Draw(t, "turn")
				phase := ownership.Start
				if _, ok := live[turn]; ok && rapid.Bool().Draw(t, "settle") {
					phase, class = ownership.Settle, live[turn]
				}
				if err := a.Observe(ctx, ownership.Event{Class: class, Phase: phase, Turn: turn}); err == nil {
					if phase == ownership.Start {
						live[turn] = class
					} else {
						delete(live, turn)
					}
				}
			}
			want := AdmFree
			if len(live) > 0 {
				want = AdmOwned
			}
			if a.Current() != want {
				t.Fatalf("state %s, live %v", a.Current(), live)
			}
		}
	})
}

// A served session's Admission fires on every live event for as long as the
// process runs: its trace must stay a ring of the last TraceLimit steps, not
// grow with every Fire (the old slice held all 1e6 steps here). The figures
// checked are counts and the ring's capacity, never time.
func TestAdmissionTraceIsBounded(t *testing.T) {
	const cycles = 500_000 // two Fires each: acquire, release
	a := NewAdmission()
	ctx := context.Background()
	for i := range cycles {
		turn := fmt.Sprintf("p%d", i)
		for _, ph := range []ownership.Phase{ownership.Start, ownership.Settle} {
			if err := a.Observe(ctx, ownership.Event{Class: ownership.Foreground, Phase: ph, Turn: turn}); err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
		}
	}
	tr := a.Trace()
	if len(tr) != TraceLimit || cap(a.m.trace) > TraceLimit {
		t.Fatalf("after %d Fires the trace holds %d steps (capacity %d), want the last %d", 2*cycles, len(tr), cap(a.m.trace), TraceLimit)
	}
	if got, want := a.m.Dropped(), 2*cycles-TraceLimit; got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
	// Oldest first, alternating, ending with the last release.
	for i, s := range tr {
		want := string(EvAcquire)
		if i%2 == 1 {
			want = string(EvRelease)
		}
		if s.Event != want {
			t.Fatalf("step %d of the kept trace is %s, want %s: %v", i, s.Event, want, tr[max(0, i-2):i+1])
		}
	}
	if s, ok := a.m.Last(); !ok || s.Event != string(EvRelease) || s.Dst != string(AdmFree) {
		t.Fatalf("Last = %+v, %v", s, ok)
	}
	a.m.Reset(nil)
	if len(a.Trace()) != 0 || a.m.Dropped() != 0 {
		t.Fatalf("after Reset: trace %d steps, dropped %d", len(a.Trace()), a.m.Dropped())
	}
}

// BenchmarkAdmissionObserve reports what one live event costs a long-lived
// Admission; with the ring its B/op does not include a growing trace.
func BenchmarkAdmissionObserve(b *testing.B) {
	a := NewAdmission()
	ctx := context.Background()
	start := ownership.Event{Class: ownership.Foreground, Phase: ownership.Start, Turn: "p"}
	settle := ownership.Event{Class: ownership.Foreground, Phase: ownership.Settle, Turn: "p"}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Observe(ctx, start); err != nil {
			b.Fatal(err)
		}
		if err := a.Observe(ctx, settle); err != nil {
			b.Fatal(err)
		}
	}
}
