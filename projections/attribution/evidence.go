package attribution

// Evidence is what the active chain shows about one target prompt: the
// fold's output, which the reconcile guards read (as guards.TranscriptEvidence).
type Evidence struct {
	Loaded   bool   // the chain was read and is non-empty
	LoadErr  string // why it could not be loaded ("" when Loaded)
	ChainLen int
	Gaps     int
	BadLines []string // positions of undecodable lines in the committed region
	TornTail bool     // the last line was a torn fragment (tolerated)
	Degraded string   // a chain inconsistency that makes the evidence unusable ("" if none)
	// Empty: the transcript exists and holds no record, and no archived copy
	// exists (set by the reconcile core, TranscriptEmpty); Loaded is then
	// true with ChainLen 0.
	Empty bool
	// NeverCreated: Empty because the transcript does not exist at all
	// (TranscriptNeverCreated): the same evidence, another file state.
	NeverCreated bool
	MarkerUUID   string // the admission's tailUuid ("" when the admission has none)
	MarkerIdx    int    // chain index of the marker, -1 when absent
	WroteAfter   bool   // a visible (non-system-type, with message) record after the marker

	LastVisibleMs    int64 // Date.parse of the last visible non-system-provenance record
	HasLastVisible   bool
	LastVisibleType  string // that record's type ("" if none)
	CompressedAfter  bool   // a compression reset after admission
	CompressionUUID  string
	LocalCommandDone bool // a local slash command completed after admission
	AfterAdmission   int  // records after admission (any type)
	VisibleAfter     int  // visible records after admission, system provenance included
	NonSystemAfter   int  // visible records after admission, excluding system provenance

	// BackgroundIdx is the chain index of the last record after admission
	// that opens a background turn (a cron prompt, a delivered notification
	// turn, a goal-runtime continuation); -1 when none.
	BackgroundIdx  int
	BackgroundUUID string
	BackgroundKind string

	// DispatchUUID is the first plain user record (a prompt: type user, no
	// subtype, real-user or absent provenance) after admission —
	// evidence that some prompt's turn started after the target was
	// admitted. "" when none.
	DispatchUUID string
	// NotDispatched: the admission's marker is on the active chain and no
	// prompt record follows it — nor any user-role record at all except
	// cron prompts, notifications and goal-runtime continuations. A prompt's turn opens with its own user
	// record, written at dispatch, after admission — so by chain position
	// (immune to clock steps) the target's turn never started, or whatever it
	// wrote was lost with the tail (a torn or vanished suffix takes every
	// later record with it). Either way interrupted is what happened.
	NotDispatched bool
	// NeverStarted: NotDispatched on a chain without prompt identities, no
	// local slash command answered after admission, and the chain after the
	// marker meets provable absence's other conditions (ADR 0023 part B: no
	// file_history_snapshot without a prompt record right before it, no call
	// of a main-session turn no snapshot names, no compression, a non-blank
	// prompt id; the core adds: every record on the active chain). The proof
	// reads only the prompt's own marker and what follows it, so it holds
	// however many prompts dangle (ADR 0014, 2026-12-01). NeverStartedBlock
	// says why not when NotDispatched holds and NeverStarted does not.
	NeverStarted      bool
	NeverStartedBlock string
	// PredecessorWatched: the latest completed predecessor's clock span
	// [admission, terminal] was watched; PredecessorShown: some prompt
	// record on the chain has a clock in it (its own, under a monotonic
	// clock).
	PredecessorWatched, PredecessorShown bool
	// MaxDispatchMs is the latest timestamp of a prompt record after
	// admission (HasDispatchMs: one had a readable timestamp).
	MaxDispatchMs int64
	HasDispatchMs bool
	// AfterLocalCommand counts visible non-system writes after the last local
	// slash-command result that completed after admission.
	AfterLocalCommand int
	// ClockStep describes the first backward step of the chain's timestamps
	// ("" when they never go backward).
	ClockStep string

	Ownership Ownership
}

// Ownership is identity evidence: transcript records that carry the
// admitting prompt's daemonPromptId. When present it replaces ordering and clocks as
// the way a tail is attributed to a prompt.
type Ownership struct {
	// Active is true when the transcript carries daemon prompt identities at
	// all (some user record on the chain has a daemonPromptId).
	Active bool
	// TargetIdx is the chain index of the target's last own user record, -1 if none.
	TargetIdx int
	// FollowedBy names what comes after the target's turn on the chain: ""
	// (nothing: the target's turn is the tail), or a description of another
	// prompt's user record or a foreign writer's record.
	FollowedBy string
	// TurnResult is the state of a turn_result record for the target
	// ("completed", "cancelled", "error"), "" when none.
	TurnResult string
	// TurnResultCancelledAt: that turn_result carries cancelledAt;
	// TurnResultHasError / TurnResultErrorCode: its error object and the
	// object's string code (0.24.4's normalizeTurnResultError).
	TurnResultCancelledAt bool
	TurnResultHasError    bool
	TurnResultErrorCode   string

	// CallIdentity: the target's own prompt record proves a writer that
	// names every call's turn (Qwen Code 0.24.4: version "0.24.4" and
	// daemonPromptId; ADR 0023), so its turn is told apart from any other
	// by call identity. TurnID is the target's internal turn id
	// ("<sid>########<n>", from the file_history_snapshot after its record
	// or its first call's telemetry; "" when neither is on the chain).
	CallIdentity bool
	TurnID       string
	// TurnEndIdx is the chain index of the first record of another turn
	// after the target's (-1: the target's turn runs to the chain's end);
	// TurnEnd says what it is. The evidence then covers the target's own
	// turn only.
	TurnEndIdx int
	TurnEnd    string
	// CallConflict describes a call of the target's own turn after that
	// turn provably ended ("" when none): the guard call-identity refuses.
	CallConflict string
	// PermissionStop is the uuid of a tool_result in the target's own
	// 0.24.4 turn (its prompt record proves the writer) whose call the
	// permission step cancelled (toolCallResult status "cancelled",
	// executionStatus "not_started"): 0.24.4 ends the turn after that batch
	// (stopAfterPermissionCancel, acpAgent-GQCJ4KZY.js ~7646) with end_turn
	// and no answer (cancelled when aborted). "" when none.
	PermissionStop string

	// Checkpoint is the uuid of the target's own turn's branch_checkpoint
	// ("" when none proves): the target's own 0.24.4 prompt record is on the
	// chain and a checkpoint follows it, before any other prompt's record,
	// whose start is the record right before it and whose answer is its
	// turn's last assistant record — written only when the turn returned
	// end_turn (checkpoint.go; ADR 0031).
	Checkpoint string

	// Absent: the target's own record is not on the chain and the chain
	// after its marker provably holds every record of every turn since
	// (ADR 0023 part B); AbsenceBlock says why not, when its record is
	// missing and absence is not proven.
	Absent       bool
	AbsenceBlock string
}
