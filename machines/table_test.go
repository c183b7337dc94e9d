package machines

import "github.com/tailproof/tailproof/guards"

// A small guarded table the Machine tests run on: the shape of a decision
// (select, then commit), with the reference's single-dangling guard on
// select. The reconcile machine itself is machines/reconcile's pure core.
const (
	RLoaded   = "loaded"
	RSelected = "target-selected"
	RNone     = "none"
	RUnknown  = "unknown"
	EvNothing = "nothing-dangling"
	EvSelect  = "select"
	EvCommit  = "commit"
	EvGiveUp  = "give-up"
)

var ReconcileTable = Table{
	Name:    "decision",
	Initial: RLoaded,
	Transitions: []Transition{
		{Event: EvNothing, Src: []string{RLoaded}, Dst: RNone},
		{Event: EvSelect, Src: []string{RLoaded}, Dst: RSelected},
		{Event: EvCommit, Src: []string{RSelected}, Dst: "committed"},
		{Event: EvGiveUp, Src: []string{RLoaded, RSelected}, Dst: RUnknown},
	},
}

type testGuards struct {
	sel guards.Guard[*guards.Evidence]
}

func (g testGuards) For(event string) guards.Guard[*guards.Evidence] {
	if event == EvSelect {
		return g.sel
	}
	return nil
}

func DefaultReconcileGuards() testGuards   { return testGuards{} }
func ReferenceReconcileGuards() testGuards { return testGuards{sel: guards.SingleDangling} }

func NewReconcile(g testGuards) *Machine[*guards.Evidence] { return New(ReconcileTable, g.For) }
