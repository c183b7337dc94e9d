package guards

import (
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/projections/attribution"
)

// Evidence is everything the reconcile guards may look at. The reconciler
// fills it from the ledger snapshot and the transcript's active chain; the
// guards only read it. Fields are grouped in the order the evidence is
// gathered, which is the order the guards run.
type Evidence struct {
	// Ledger snapshot.
	LedgerLen     int
	LedgerDropped int      // malformed lines dropped, exactly as the reference drops them
	Dangling      []string // prompts whose latest record is in_flight, admission order
	Target        string   // the prompt under decision ("" until selected)
	// TailOwner is the dangling prompt the transcript's tail is attributed
	// to when several are decided at once ("" otherwise: the target).
	TailOwner     string
	Admission     ledger.Record
	HasAdmission  bool // a latest unsettled admission exists
	OtherTerminal float64
	HasOtherTerm  bool
	// PredecessorTerminal is the latest terminal `at` of the prompts admitted
	// ahead of the target (HasPredTerm: there is one).
	PredecessorTerminal float64
	HasPredTerm         bool
	OtherDeadlines      []ledger.Record // prompt_deadline_exceeded terminals of other prompts
	// LedgerClockStep describes the first record whose `at` is earlier than
	// an earlier record's ("" when the ledger's clock never goes backward).
	LedgerClockStep string

	// Transcript.
	Transcript TranscriptEvidence

	// Classification: the route's verdict over the evidence.
	Classification Classification

	// LedgerSize is the ledger's size in bytes when it was read.
	LedgerSize int64

	// Race fence: the ledger's size measured just before the append.
	RefetchSize int64
	RefetchErr  string
}

// TranscriptEvidence is what the active chain shows about the target: the
// attribution projection's output (attribution.Evidence), which the guards
// read.
type TranscriptEvidence = attribution.Evidence

// OwnershipEvidence is identity evidence (attribution.Ownership).
type OwnershipEvidence = attribution.Ownership

// Classification is the verdict over the classifiable tail.
type Classification struct {
	Done           bool
	Kind           string // none | interrupted_prompt | interrupted_turn
	IdlessUpgrade  bool   // none upgraded: the tail's last model entry holds a functionCall
	Interrupted    bool
	FromTurnResult bool // decided by the target's own turn_result record
	// FromSettledTurn: that turn_result settled the target otherwise than
	// completed (cancelled, error...); SettledTurn says which are decided.
	FromSettledTurn bool
	// FromAbsence: decided interrupted because the target's own record is
	// provably absent (TranscriptEvidence.Ownership.Absent).
	FromAbsence bool
	// FromCheckpoint: decided completed because the target's own turn wrote
	// its branch_checkpoint (TranscriptEvidence.Ownership.Checkpoint); no
	// tail was read.
	FromCheckpoint bool
	// FromLocalCommand: a local slash command answered the target after its
	// admission and nothing visible followed — the target completed.
	FromLocalCommand bool
	Guessed          bool // the notification trim fell back to content shape
	// FromNotDispatched: decided interrupted because the target's turn never
	// started after its marker (TranscriptEvidence.NotDispatched); the tail
	// belongs to another turn and was not classified.
	FromNotDispatched bool
}
