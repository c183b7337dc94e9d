package recovery

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/interruption"
	"github.com/tailproof/tailproof/projections/ownership"
)

// PlanKind is the recovery plan's kind, the reference's SessionRecoveryPlan
// kinds.
type PlanKind string

const (
	PlanClean             PlanKind = "clean"
	PlanInterruptedPrompt PlanKind = "interrupted_prompt"
	PlanInterruptedTurn   PlanKind = "interrupted_turn"
	PlanDegradedHistory   PlanKind = "degraded_history"
)

// Continuation modes, the reference's continuation.mode values.
const (
	ModeRetryUserParts  = "retry_user_parts"
	ModeToolResultParts = "tool_result_parts"
)

// InterruptedToolReason is the reference's ORPHAN_TOOL_USE_REPAIR_REASON: the
// error a synthetic tool result carries for a call whose result was never
// recorded.
const InterruptedToolReason = "Tool execution result was not recorded \u2014 likely interrupted by network failure, abort, or process exit. Treat as failure and retry if needed."

// ResendPart is one part a continuation would send, verbatim.
type ResendPart struct {
	Part qwen.Part // Part.Raw holds the exact JSON to resend
	// Source is the record the part came from: who wrote it. A synthetic
	// tool result has none.
	Source apihistory.Source
	// Guessed is true when the record carried no provenance and the part was
	// kept on shape alone.
	Guessed bool
}

// ExcludedPart is a part of the unanswered tail a continuation does NOT
// resend, and why.
type ExcludedPart struct {
	Part   qwen.Part
	Source apihistory.Source
	Reason string
}

// Action is one answer to "does the evidence support doing this?".
type Action struct {
	Supported bool
	Reason    string
}

// Support is what the evidence supports — three separate answers: telling the
// user (Notice), offering a continuation (Offer), and starting one without
// asking (AutoExecute). A host may show a notice it must not offer, and offer
// what it must not auto-execute.
type Support struct {
	Notice      Action
	Offer       Action
	AutoExecute Action
}

// TranscriptState says what the store held of the session's transcript. A
// kill right after a prompt's admission leaves the ledger's in_flight record
// and no transcript (Missing), or one with no record in it (Empty): states
// to describe, not errors. Both are an empty history.
type TranscriptState string

const (
	TranscriptPresent TranscriptState = "present"
	TranscriptMissing TranscriptState = "missing"
	TranscriptEmpty   TranscriptState = "empty"
)

// Status is what a session's persisted tail means for recovery and whether a
// continuation may start now.
type Status struct {
	SessionID string
	// Transcript says whether the transcript exists and holds a record.
	Transcript TranscriptState
	Kind       PlanKind
	// TailKind is the kind the tail would have if the history were intact
	// (clean, interrupted_prompt or interrupted_turn): equal to Kind except
	// under degraded_history, which withholds it.
	TailKind PlanKind
	// ContinuationMode is retry_user_parts or tool_result_parts ("" when
	// there is nothing to continue).
	ContinuationMode string
	// Resend are the parts a continuation would send: real-user parts and
	// tool responses of an interrupted prompt, or the synthetic results of an
	// interrupted turn. Never a notification, cron, goal-runtime or other
	// system-provenance part.
	Resend   []ResendPart
	Excluded []ExcludedPart
	// DanglingCalls are the model's tool calls without results (interrupted
	// turns); IdlessCalls counts calls in that model entry with no id, to
	// which no result can be addressed.
	DanglingCalls []interruption.Call
	IdlessCalls   int
	// Synthetic are the interruption results a continuation sends for
	// DanglingCalls (also listed in Resend).
	Synthetic []qwen.Part

	CanContinue              bool
	Reason                   string // why CanContinue is what it is
	RequiresUserConfirmation bool
	Support                  Support
	// Notice is the text a host shows (the reference's visibleNotice), "" when
	// there is nothing to tell.
	Notice string

	// Cancelled: the user cancelled the last turn (turn_result cancelled with
	// cancelledAt). A cancelled turn is never offered for continuation.
	// CancelledBy lists the evidence.
	Cancelled   bool
	CancelledBy []string
	// SettledBy names the turn_result that settled the tail as completed.
	SettledBy string
	// Guessed: some decision fell back to content shape because records
	// carried no provenance; Guesses says which.
	Guessed bool
	Guesses []string
	// Trimmed counts the trailing notifications cut before classification.
	Trimmed int
	Mode    interruption.Mode
	// Degraded says why the history cannot be trusted ("" when it can).
	Degraded string
	// Owners are the live owners the status was asked under.
	Owners []ownership.Owner
	// Dangling are the ledger's prompts left in_flight (with a ledger).
	Dangling []string
	// Trace lists the folds and decisions that led here.
	Trace []string
	// Turn is the session's last prompt as every harness's `turn` object
	// describes its last turn; nil when the session names none.
	Turn *Turn
}

// Input is everything a recovery plan is computed from: what the façade
// read (the history and the chain's state) and what the reconcile core
// answered (the target and its turn_result), plus the caller's facts.
type Input struct {
	SessionID string
	// Transcript is the transcript's state ("" reads as TranscriptPresent).
	Transcript TranscriptState
	History    apihistory.Result
	Mode       interruption.Mode
	// Identity: the target's own turn_result may settle the tail (false
	// under the reference's rules, which read no identities).
	Identity bool
	// Target is the prompt whose transcript turn_result the plan consults
	// (the reconcile core's target: Reconcile and Status cannot pick
	// different ones); TurnResult is its last turn_result state.
	Target, TurnResult string
	// Degraded says why the history cannot be trusted ("" when it can).
	Degraded          string
	Owners            []ownership.Owner
	AllowAutoContinue bool
	Dangling          []string
	// Pending is the reconcile core's decision for Target when the ledger
	// left it in flight (zero when no prompt dangles): a clean tail says
	// nothing about a prompt that never reached it.
	Pending Pending
	// Trace is the trace so far (the façade's folds); the plan appends.
	Trace []string
	// Last is what the façade knows of the session's last prompt, from
	// which the plan derives Status.Turn.
	Last TurnInput
}

// Pending is what the reconcile core decides, before its fence and clock,
// for the prompt the plan consults when the ledger left it in flight.
type Pending struct {
	Prompt string
	// Outcome is the verdict reconcile reaches: OutcomeCompleted,
	// OutcomeInterrupted, OutcomeSettled or OutcomeUnknown.
	Outcome string
	// NotStarted: the verdict is proven by the absence of the prompt's own
	// record after its admission (its turn never started).
	NotStarted bool
	// Why lists the vetoes that keep the outcome unknown.
	Why string
}

// Pending outcomes.
const (
	OutcomeCompleted   = "completed"
	OutcomeInterrupted = "interrupted"
	OutcomeSettled     = "settled"
	OutcomeUnknown     = "unknown"
)

// Plan classifies the tail and decides what the evidence supports.
func Plan(in Input) Status {
	st := Status{SessionID: in.SessionID, Transcript: in.Transcript, Owners: in.Owners, Mode: in.Mode, Degraded: in.Degraded, Dangling: in.Dangling, Trace: in.Trace}
	if st.Transcript == "" {
		st.Transcript = TranscriptPresent
	}
	tracef := func(format string, args ...any) { st.Trace = append(st.Trace, fmt.Sprintf(format, args...)) }
	c := interruption.ClassifyTail(in.History, in.Mode)
	st.Trimmed = c.Tail.Trimmed
	if c.Tail.Guessed {
		st.guess(fmt.Sprintf("%d trailing notification-shaped entr%s carried no provenance and %s trimmed on shape",
			c.Tail.Trimmed, plural(c.Tail.Trimmed, "y", "ies"), plural(c.Tail.Trimmed, "was", "were")))
	}
	upgraded := ""
	if c.IdlessUpgrade {
		upgraded = ", upgraded: tail holds an id-less functionCall"
	}
	tracef("classify: %s (%s)%s", c.Verdict.Kind, c.Tail.Describe(), upgraded)

	kind := PlanClean
	switch {
	case in.Identity && in.Target != "" && in.TurnResult == "completed":
		// Reconcile settles a prompt whose own turn_result says completed
		// before classifying (the own-turn-result route); so does the plan.
		// The reference has no such rule.
		st.SettledBy = in.Target
		tracef("classify: the transcript's turn_result for %s says completed", in.Target)
	case c.Verdict.Kind == interruption.KindInterruptedPrompt:
		kind = PlanInterruptedPrompt
	case c.Verdict.Kind == interruption.KindInterruptedTurn || c.IdlessUpgrade:
		kind = PlanInterruptedTurn
	}
	st.Kind, st.TailKind = kind, kind
	if st.Degraded != "" {
		st.Kind = PlanDegradedHistory
		tracef("degraded: %s", st.Degraded)
	}
	if in.History.CancelledLastTurn {
		st.CancelledBy = append(st.CancelledBy, "the last api prompt's turn_result is cancelled with cancelledAt (isLastApiPromptCancelled)")
	}
	if in.Target != "" && in.TurnResult == "cancelled" {
		st.CancelledBy = append(st.CancelledBy, "the transcript's turn_result for "+in.Target+" says cancelled")
	}
	if st.Cancelled = len(st.CancelledBy) > 0; st.Cancelled {
		tracef("cancelled: %s", strings.Join(st.CancelledBy, "; "))
	}

	switch st.Kind {
	case PlanInterruptedPrompt:
		st.ContinuationMode = ModeRetryUserParts
		st.resendPrompt(c.Verdict.Parts)
	case PlanInterruptedTurn:
		st.ContinuationMode = ModeToolResultParts
		st.DanglingCalls = c.Verdict.DanglingCalls
		st.IdlessCalls = idlessCalls(c.Tail)
		st.Synthetic = interruption.SyntheticToolResponses(st.DanglingCalls, InterruptedToolReason)
		for _, p := range st.Synthetic {
			st.Resend = append(st.Resend, ResendPart{Part: p})
		}
	}
	st.decide(in)
	st.Turn = lastTurn(in, &st)
	return st
}

// decide answers canContinue, confirmation and the three support questions.
func (st *Status) decide(in Input) {
	gate := &machines.AdmissionEvidence{Request: "status", Owners: in.Owners}
	ownerVetoes := machines.NoActiveTurn.Check(gate)

	// attributed: every part to resend was written, by its record's own
	// account, by the user or by a tool.
	attributed := len(st.Resend) > 0
	for _, p := range st.Resend {
		pv := p.Source.Provenance
		if p.Source.Origin != events.OriginCarried || pv != events.ProvenanceRealUser && pv != events.ProvenanceToolResult {
			attributed = false
		}
	}
	switch st.Kind {
	case PlanClean:
		st.Reason, st.Notice = st.cleanReason(in)
	case PlanDegradedHistory:
		st.Reason = "the history is incomplete (" + st.Degraded + "): automatic or offered continuation would extend a history that may not be the real one"
		st.Notice = "Resumed session history is incomplete: " + st.Degraded + ". Automatic continuation is disabled for this recovery."
	case PlanInterruptedPrompt:
		st.Notice = "Previous session appears to have stopped after user input before the model completed a response."
		switch {
		case len(st.Resend) == 0:
			st.Reason = "no unanswered input is attributable to the user (" + excludedText(st.Excluded) + "); there is nothing to resend"
			st.Notice = "Previous session appears to have stopped after input that was not the user's (" + excludedText(st.Excluded) + "); nothing will be resent."
		default:
			st.CanContinue = true
		}
	case PlanInterruptedTurn:
		st.Notice = "Previous session appears to have stopped during tool execution."
		switch {
		case len(st.DanglingCalls) == 0:
			st.Reason = "the model's last turn holds a functionCall without an id: no tool result can be addressed to it"
		default:
			st.CanContinue = true
			st.Notice = fmt.Sprintf("Previous session appears to have stopped during tool execution. %d tool call(s) will receive a failed result so the history can continue safely.", len(st.DanglingCalls))
		}
	}
	if st.Cancelled && st.Kind != PlanClean {
		st.CanContinue = false
		st.Reason = "the user cancelled the last turn: a cancelled turn is never re-run"
		st.Notice = "The previous request was cancelled."
	}
	if st.CanContinue && len(ownerVetoes) > 0 {
		st.CanContinue = false
		st.Reason = ownerVetoes[0].String()
	}
	if st.CanContinue {
		st.Reason = "the tail is an " + string(st.Kind) + " and no live turn owns the session"
		if st.Kind == PlanInterruptedPrompt {
			st.Reason = fmt.Sprintf("the tail is an unanswered prompt (%d part(s) to resend) and no live turn owns the session", len(st.Resend))
		}
	}

	// Confirmation: the reference's rule (interrupted turns and degraded
	// history always; prompts unless the host allows auto-continue and the
	// evidence supports it).
	st.RequiresUserConfirmation = st.Kind != PlanClean

	s := &st.Support
	switch {
	case st.Kind != PlanClean:
		s.Notice = Action{true, "the tail is " + string(st.Kind)}
	case st.Cancelled:
		s.Notice = Action{true, "the last turn was cancelled by the user"}
	case st.Notice != "":
		s.Notice = Action{true, "prompt " + in.Pending.Prompt + " is in flight in the ledger and the transcript holds nothing of it to continue"}
	case in.History.Total == 0:
		s.Notice = Action{false, "the history holds no turn"}
	default:
		s.Notice = Action{false, "the last turn settled"}
	}
	if st.Cancelled && st.Kind != PlanClean {
		s.Notice.Reason = "the tail is " + string(st.Kind) + ", cancelled by the user"
	}
	s.Offer = Action{st.CanContinue, st.Reason}
	switch {
	case !st.CanContinue:
		s.AutoExecute = Action{false, "nothing may be continued: " + st.Reason}
	case st.Kind == PlanInterruptedTurn:
		s.AutoExecute = Action{false, "an interrupted tool turn is never auto-executed: its calls may have had side effects the synthetic results cannot vouch for"}
	case st.Guessed:
		s.AutoExecute = Action{false, "provenance was guessed from shape: " + strings.Join(st.Guesses, "; ")}
	case !attributed:
		s.AutoExecute = Action{false, "not every resent part carries real-user or tool-result provenance"}
	default:
		s.AutoExecute = Action{true, "every resent part carries real-user or tool-result provenance, the history is intact and nothing owns the session"}
	}
	if st.Kind == PlanInterruptedPrompt && st.CanContinue && s.AutoExecute.Supported && in.AllowAutoContinue {
		st.RequiresUserConfirmation = false
	}
}

// cleanReason says why a clean tail has nothing to continue, and the notice
// a host shows ("" for none). A clean tail is the reference's plan kind for
// an api history with no unanswered turn, an empty one included (Qwen Code
// 0.24.4, session-recovery.ts buildSessionRecoveryPlanFromApiHistory); it
// proves nothing about a prompt the ledger left in flight whose own turn
// the transcript does not hold, so that prompt's fate is said as reconcile
// decides it: never started, or unknown.
func (st *Status) cleanReason(in Input) (reason, notice string) {
	p := in.Pending
	switch {
	case st.SettledBy != "":
		return "the transcript's turn_result for " + st.SettledBy + " says completed", ""
	case p.Prompt == "" || p.Outcome == OutcomeCompleted || p.Outcome == OutcomeSettled:
	case p.NotStarted:
		return "prompt " + p.Prompt + ", in flight in the ledger, never started: no record of its turn follows its admission (reconcile: interrupted); nothing of it can be continued",
			"The previous prompt was accepted but never started; nothing of it was recorded, so nothing will be continued."
	case p.Outcome == OutcomeUnknown && in.History.Total == 0:
		return "no turn settled: prompt " + p.Prompt + " is in flight in the ledger and " + noHistory(in.Transcript) + ", so whether it never started or its records were lost cannot be known (reconcile: unknown: " + p.Why + "); there is nothing to continue",
			"The previous prompt was accepted but nothing of it was recorded; its outcome cannot be determined and nothing will be continued."
	default:
		return "the transcript's last turn settled, but prompt " + p.Prompt + ", in flight in the ledger, is not proven to be that turn (reconcile: " + p.Outcome + pendingWhy(p) + "); there is nothing to continue",
			"The previous prompt's outcome cannot be determined from the session's history; nothing will be continued."
	}
	if in.History.Total == 0 {
		return "the history holds no turn: nothing to continue", ""
	}
	return "the last turn settled: nothing to continue", ""
}

// noHistory says why the history is empty.
func noHistory(t TranscriptState) string {
	if t == TranscriptMissing {
		return "the transcript does not exist"
	}
	return "the transcript holds no history"
}

func pendingWhy(p Pending) string {
	if p.Why == "" {
		return ""
	}
	return ": " + p.Why
}
