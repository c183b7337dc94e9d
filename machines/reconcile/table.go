package reconcile

import "github.com/tailproof/tailproof/machines"

// State is a state of the reconcile machine: where one dangling prompt's
// decision stands.
type State string

// The reconcile machine's states.
const (
	Loaded            State = "loaded"
	TargetSelected    State = "target-selected"
	Attributed        State = "attributed"
	EvidenceChecked   State = "evidence-checked"
	ProvenCompleted   State = "proven-completed"
	ProvenInterrupted State = "proven-interrupted"
	// ProvenSettled: the prompt's own turn_result proves the terminal the
	// daemon would have written (cancelled or error; ADR 0026).
	ProvenSettled State = "proven-settled"
	Committed     State = "committed"
	Unknown       State = "unknown"
	None          State = "none"
)

// Event is a reconcile machine event.
type Event string

// The reconcile machine's events. The five classification events are the
// five routes by which a verdict is reached; each is its own transition, so
// the diagram shows where a verdict comes from.
const (
	EvNothing   Event = "nothing-dangling"
	EvSelect    Event = "select"
	EvAttribute Event = "attribute"
	EvCheck     Event = "check-evidence"
	// EvOwnTurnResult: the prompt's own system/turn_result says completed.
	EvOwnTurnResult Event = "own-turn-result"
	// EvOwnSettledTurn: the prompt's own system/turn_result settled it
	// cancelled or in error; the terminal is the one the 0.24.4 serve
	// ledger would have written for that outcome (ADR 0026).
	EvOwnSettledTurn Event = "own-settled-turn"
	// EvOwnCheckpoint: the prompt's own turn wrote its branch_checkpoint,
	// which Qwen Code 0.24.4 writes only for a turn that returned end_turn
	// (ADR 0031).
	EvOwnCheckpoint Event = "own-branch-checkpoint"
	// EvLocalCommand: a local slash command answered the prompt after its
	// admission and nothing visible followed.
	EvLocalCommand Event = "local-slash-command"
	// EvNotDispatched: no prompt record follows the prompt's dispatch
	// marker: its turn never started.
	EvNotDispatched Event = "not-dispatched"
	// EvOwnRecordAbsent: where the writer stamps identities, the prompt's
	// own record provably never reached the transcript (ADR 0023 part B).
	EvOwnRecordAbsent Event = "own-record-absent"
	// EvTailComplete / EvTailInterrupted: the classifiable tail of the
	// transcript ends answered / unanswered.
	EvTailComplete    Event = "tail-complete"
	EvTailInterrupted Event = "tail-interrupted"
	EvCommit          Event = "commit"
	EvGiveUp          Event = "give-up"
)

func states(s ...State) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

// Table is the reconcile machine: one decision for one dangling prompt.
// Every forward step is guarded (Guards.For); a veto sends the machine to
// unknown, which appends nothing.
var Table = machines.Table{
	Name:    "reconcile",
	Initial: string(Loaded),
	Transitions: []machines.Transition{
		{Event: string(EvNothing), Src: states(Loaded), Dst: string(None)},
		{Event: string(EvSelect), Src: states(Loaded), Dst: string(TargetSelected)},
		{Event: string(EvAttribute), Src: states(TargetSelected), Dst: string(Attributed)},
		{Event: string(EvCheck), Src: states(Attributed), Dst: string(EvidenceChecked)},
		{Event: string(EvOwnTurnResult), Src: states(EvidenceChecked), Dst: string(ProvenCompleted)},
		{Event: string(EvOwnCheckpoint), Src: states(EvidenceChecked), Dst: string(ProvenCompleted)},
		{Event: string(EvLocalCommand), Src: states(EvidenceChecked), Dst: string(ProvenCompleted)},
		{Event: string(EvTailComplete), Src: states(EvidenceChecked), Dst: string(ProvenCompleted)},
		{Event: string(EvNotDispatched), Src: states(EvidenceChecked), Dst: string(ProvenInterrupted)},
		{Event: string(EvOwnRecordAbsent), Src: states(EvidenceChecked), Dst: string(ProvenInterrupted)},
		{Event: string(EvTailInterrupted), Src: states(EvidenceChecked), Dst: string(ProvenInterrupted)},
		{Event: string(EvOwnSettledTurn), Src: states(EvidenceChecked), Dst: string(ProvenSettled)},
		{Event: string(EvCommit), Src: states(ProvenCompleted, ProvenInterrupted, ProvenSettled), Dst: string(Committed)},
		{Event: string(EvGiveUp), Src: states(Loaded, TargetSelected, Attributed, EvidenceChecked, ProvenCompleted, ProvenInterrupted, ProvenSettled), Dst: string(Unknown)},
	},
}

// next is the table's destination for event from src.
func next(src State, event Event) (State, bool) {
	for _, tr := range Table.Transitions {
		if tr.Event != string(event) {
			continue
		}
		for _, s := range tr.Src {
			if s == string(src) {
				return State(tr.Dst), true
			}
		}
	}
	return "", false
}
