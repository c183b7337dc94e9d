package guards_test

import (
	"fmt"

	"github.com/tailproof/tailproof/guards"
)

// A harness's own evidence and guard, composed with the combinators.
type session struct{ staleMinutes int }

func Example() {
	fresh := guards.Func("fresh-ledger", func(s session) string {
		if s.staleMinutes > 60 {
			return fmt.Sprintf("ledger is %d minutes old", s.staleMinutes)
		}
		return ""
	})
	small := guards.Func("small", func(s session) string { return "" })
	g := guards.All(fresh, guards.Not(small))
	fmt.Println(g)
	for _, v := range g.Check(session{staleMinutes: 90}) {
		fmt.Println(v)
	}
	// Output:
	// all(fresh-ledger, not(small))
	// fresh-ledger: ledger is 90 minutes old
	// not(small): small allowed
}

// The reconcile guards are values: their composition prints, and a check
// names every refusing rule.
func ExampleAll() {
	e := &guards.Evidence{Target: "p2", Dangling: []string{"p1", "p2"}, HasAdmission: true}
	e.Admission.PromptID = "p1"
	g := guards.All(guards.SingleDangling, guards.Attribution)
	fmt.Println(g)
	for _, v := range g.Check(e) {
		fmt.Println(v.Guard)
	}
	// Output:
	// all(single-dangling, attribution)
	// single-dangling
	// attribution
}
