package simulations

import (
	"context"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// rapidSource lets rapid draw every choice the model makes, so a failing
// run shrinks to a minimal interleaving of actions and choices.
type rapidSource struct{ t *rapid.T }

func (s *rapidSource) IntN(n int) int {
	if n <= 1 {
		return 0
	}
	return rapid.IntRange(0, n-1).Draw(s.t, "choice")
}

// rapidProfile turns every feature on; rapid picks the actions itself.
func rapidProfile() *Profile {
	p := profiles[len(profiles)-1] // mixed
	p.Name = "rapid"
	p.MaxRestarts = 4
	return &p
}

// machine is the state-machine property: rapid draws the version, then a
// sequence of daemon actions (each one's own choices drawn too), then the
// final crash; check runs the invariants. strict adds "no wrong terminal".
func machine(t *rapid.T, strict bool) {
	src := &rapidSource{t: t}
	ver := Versions[rapid.IntRange(0, len(Versions)-1).Draw(t, "version")]
	d := NewDaemon(context.Background(), src, rapidProfile(), ver)
	d.trace = []string{}
	acts := map[string]func(*rapid.T){}
	for a := Action(0); a < NumActions; a++ {
		acts[a.String()] = func(rt *rapid.T) {
			src.t = rt
			d.act(a)
		}
	}
	acts[""] = func(rt *rapid.T) {
		if len(d.violations) > 0 {
			rt.Fatalf("%s\n%s", strings.Join(d.violations, "\n"), strings.Join(d.trace, "\n"))
		}
		if strict && len(d.wrong) > 0 {
			rt.Fatalf("%s\n%s", strings.Join(d.wrong, "\n"), strings.Join(d.trace, "\n"))
		}
	}
	t.Repeat(acts)
	src.t = t
	var res Result
	d.finish(&res)
	bad := res.Violations
	if strict {
		bad = append(bad, res.WrongTerminals...)
	}
	if len(bad) > 0 {
		t.Fatalf("%s\n%s", strings.Join(bad, "\n"), strings.Join(d.trace, "\n"))
	}
}

// TestDaemonInvariants: whatever the interleaving and the crash, no fsynced
// ledger record is lost, recovery settles each prompt at most once and a
// second recovery appends nothing, nothing outside the dangling set is
// stamped, and the store never fails.
func TestDaemonInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { machine(t, false) })
}

// TestNoWrongTerminal is the claim that matters: tailproof never stamps a
// wrong terminal. Failing cases rapid finds are saved under testdata/rapid
// and replayed first on the next run.
func TestNoWrongTerminal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { machine(t, true) })
}
