package tailproof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/interruption"
	"github.com/tailproof/tailproof/projections/ledgerview"
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

// StatusOptions configure Status.
type StatusOptions struct {
	// Ledger, when set, is read for the prompts left in_flight; the first one
	// is the prompt whose transcript turn_result the status consults (as
	// Reconcile does). Without it, the last prompt identity on the chain is.
	Ledger adapters.LedgerStore
	// Owners are the session's live owners at the instant of the question
	// (machines.Admission.Owners, or the runtime's own fold). Any owner
	// refuses a continuation through machines.NoActiveTurn — the predicate
	// admission itself uses. Nil means the caller knows of none (a cold
	// session read from disk).
	Owners []ownership.Owner
	// Reference trims trailing notifications by content shape only, as
	// Qwen Code 0.24.4's daemon and headless paths do; it pairs with
	// Options.Reference. By default the trim follows record provenance.
	Reference bool
	// AllowAutoContinue is the host's policy switch (the reference's
	// options.allowAutoContinue): an interrupted prompt whose evidence
	// supports auto-execution then needs no confirmation.
	AllowAutoContinue bool
	// MaxLineBytes bounds a transcript line (<= 0: events.DefaultMaxLineBytes).
	MaxLineBytes int
}

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

// RecoveryStatus is what a session's persisted tail means for recovery and
// whether a continuation may start now.
type RecoveryStatus struct {
	SessionID string
	Kind      PlanKind
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
}

// ErrNoTranscript classifies a session whose transcript is missing or cannot
// be read at all: there is no history to recover from.
var ErrNoTranscript = errors.New("transcript unreadable")

// Status reads sessionID's transcript (and, optionally, ledger) and says what
// its tail means for recovery: the plan kind, the exact parts a continuation
// would send, whether one may start now and why, and which of notice / offer
// / auto-execute the evidence supports.
//
// The tail is classified through interruption.ClassifiableTail and Classify
// with the same fold options as Reconcile, so the two never disagree about
// where the history ends (ClassifyTail is that shared step).
func Status(ctx context.Context, store adapters.TranscriptStore, sessionID string, opts StatusOptions) (RecoveryStatus, error) {
	st := RecoveryStatus{SessionID: sessionID, Owners: opts.Owners, Mode: interruption.Provenance}
	if opts.Reference {
		st.Mode = interruption.ShapeOnly
	}
	tracef := func(format string, args ...any) { st.Trace = append(st.Trace, fmt.Sprintf(format, args...)) }

	target := ""
	if opts.Ledger != nil {
		dangling, err := statusLedger(ctx, opts.Ledger, sessionID)
		if err != nil {
			return st, err
		}
		st.Dangling = dangling
		if len(dangling) > 0 {
			target = dangling[0]
		}
		tracef("fold ledger: dangling [%s]", strings.Join(dangling, " "))
	}

	open := func() (io.ReadCloser, error) { return store.OpenTranscript(ctx, sessionID) }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{
		Decode:       qwen.DecodeOptions{KeepPayloads: true},
		MaxLineBytes: opts.MaxLineBytes,
	})
	if err != nil {
		return st, fmt.Errorf("tailproof: status%s: %w: %w", sessionLabel(sessionID), ErrNoTranscript, err)
	}
	acc := apihistory.New(apihistory.Options{})
	results := map[string]string{} // daemon prompt id → its last turn_result state
	lastIdentified := ""
	werr := chain.Walk(open, func(_ int, e events.Event) error {
		if rec, ok := e.Body.(*qwen.Record); ok {
			if rec.Type == qwen.TypeUser && rec.DaemonPromptID != "" {
				lastIdentified = rec.DaemonPromptID
			}
			if rec.Type == qwen.TypeSystem && rec.TurnResult != nil {
				results[rec.TurnResult.PromptID] = rec.TurnResult.State
			}
		}
		return acc.Add(e)
	})
	if werr != nil {
		return st, fmt.Errorf("tailproof: status%s: %w: %w", sessionLabel(sessionID), ErrNoTranscript, werr)
	}
	switch {
	case len(chain.Gaps) > 0:
		st.Degraded = chain.Degraded()
	case !opts.Reference:
		st.Degraded = chain.Degraded()
	}
	res := acc.Result()
	tracef("fold transcript: chain %d records, %d gaps, history %d entries", chain.Len, len(chain.Gaps), res.Total)
	if target == "" {
		target = lastIdentified
	}

	c := ClassifyTail(res, st.Mode)
	st.Trimmed = c.Tail.Trimmed
	if c.Tail.Guessed {
		st.guess(fmt.Sprintf("%d trailing notification-shaped entr%s carried no provenance and %s trimmed on shape",
			c.Tail.Trimmed, plural(c.Tail.Trimmed, "y", "ies"), plural(c.Tail.Trimmed, "was", "were")))
	}
	tracef("classify: %s (%s)%s", c.Verdict.Kind, c.Tail.Describe(), map[bool]string{true: ", upgraded: tail holds an id-less functionCall", false: ""}[c.IdlessUpgrade])

	kind := PlanClean
	switch {
	case !opts.Reference && target != "" && results[target] == "completed":
		// Reconcile settles a prompt whose own turn_result says completed
		// before classifying; so does status, so they cannot disagree. The
		// reference has no such rule (Options.Reference ignores identities).
		st.SettledBy = target
		tracef("classify: the transcript's turn_result for %s says completed", target)
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
	if res.CancelledLastTurn {
		st.CancelledBy = append(st.CancelledBy, "the last api prompt's turn_result is cancelled with cancelledAt (isLastApiPromptCancelled)")
	}
	if target != "" && results[target] == "cancelled" {
		st.CancelledBy = append(st.CancelledBy, "the transcript's turn_result for "+target+" says cancelled")
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
	st.decide(opts)
	return st, nil
}

func statusLedger(ctx context.Context, store adapters.LedgerStore, sid string) ([]string, error) {
	rc, err := store.OpenLedger(ctx, sid)
	if err != nil {
		return nil, fmt.Errorf("tailproof: status%s: %w: %v", sessionLabel(sid), ErrUnreadableLedger, err)
	}
	defer rc.Close()
	recs, _, err := ledger.Read(rc, false)
	if err != nil {
		return nil, fmt.Errorf("tailproof: status%s: %w: %v", sessionLabel(sid), ErrUnreadableLedger, err)
	}
	v := ledgerview.New()
	for _, r := range recs {
		v.Add(r)
	}
	return v.Dangling(), nil
}

// TailClassification is the one classifier step reconciliation and status
// share: the classifiable tail, its verdict, and reconcile's id-less upgrade.
type TailClassification struct {
	Tail    interruption.Tail
	Verdict interruption.Verdict
	// IdlessUpgrade: the verdict is none but the tail's last model entry
	// holds a functionCall (without an id): the turn was cut mid tool call.
	IdlessUpgrade bool
}

// Interrupted is the verdict reconciliation stamps: interrupted when the
// tail is an interrupted prompt or turn, or upgraded.
func (c TailClassification) Interrupted() bool {
	return c.Verdict.Kind != interruption.KindNone || c.IdlessUpgrade
}

// ClassifyTail normalizes the history tail once and classifies it:
// interruption.ClassifiableTail, interruption.Classify, then the id-less
// upgrade. Every consumer that asks "how does this history end?" goes through
// here or through exactly these calls (reconcile.go's classify).
func ClassifyTail(res apihistory.Result, mode interruption.Mode) TailClassification {
	t := interruption.ClassifiableTail(res, mode)
	v := interruption.Classify(t, res.CompletedToolCallIDs)
	return TailClassification{Tail: t, Verdict: v,
		IdlessUpgrade: v.Kind == interruption.KindNone && interruption.TailHoldsAnyFunctionCall(t)}
}

func idlessCalls(t interruption.Tail) int {
	if len(t.Entries) == 0 {
		return 0
	}
	n := 0
	for _, p := range t.Entries[len(t.Entries)-1].Content.Parts {
		if p.Kind == qwen.PartFunctionCall && (!p.HasID || p.ID == "") {
			n++
		}
	}
	return n
}

func (st *RecoveryStatus) guess(why string) {
	st.Guessed = true
	st.Guesses = append(st.Guesses, why)
}

// resendPrompt keeps the parts a continuation may resend: those written by
// the user or by a tool. System-like provenance (notification, cron, goal
// runtime, anything "system") is never user intent. A record without
// provenance is judged by its subtype and shape, and the status says so.
func (st *RecoveryStatus) resendPrompt(parts []interruption.Part) {
	for _, p := range parts {
		src := p.Source
		reason, guessed := excludeReason(p.Part, src)
		if guessed {
			st.guess(fmt.Sprintf("record %s carries no provenance: its part was judged by shape", orDash(src.UUID)))
		}
		if reason != "" {
			st.Excluded = append(st.Excluded, ExcludedPart{Part: p.Part, Source: src, Reason: reason})
			continue
		}
		st.Resend = append(st.Resend, ResendPart{Part: p.Part, Source: src, Guessed: guessed})
	}
}

func excludeReason(p qwen.Part, src apihistory.Source) (reason string, guessed bool) {
	switch src.Subtype {
	case qwen.SubtypeChatCompression:
		// A compressed entry has no record of its own: whether the user or
		// the summarizer wrote it is unknown, so it is not resent as intent.
		return "from compressed history: the entry has no record of its own, so its author is unknown", false
	case qwen.SubtypeNotification, qwen.SubtypeCron:
		return "a " + src.Subtype + " record is not user input", src.Origin == events.OriginNone
	}
	if src.Origin != events.OriginNone {
		if src.Provenance.IsSystemLike() {
			return "written with " + src.Provenance.String() + " provenance, not by the user", false
		}
		return "", false
	}
	if p.Kind == qwen.PartFunctionResponse {
		return "", false // a tool result is structural: its shape is its provenance
	}
	if p.HasText && apihistory.IsSystemNotificationContent(qwen.Content{Role: "user", Parts: []qwen.Part{p}}) {
		return "a task-notification envelope in a record without provenance (judged by shape)", true
	}
	return "", true
}

// decide answers canContinue, confirmation and the three support questions.
func (st *RecoveryStatus) decide(opts StatusOptions) {
	gate := &machines.AdmissionEvidence{Request: "status", Owners: opts.Owners}
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
		st.Reason = "the last turn settled: nothing to continue"
		if st.SettledBy != "" {
			st.Reason = "the transcript's turn_result for " + st.SettledBy + " says completed"
		}
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
	if st.Kind == PlanInterruptedPrompt && st.CanContinue && s.AutoExecute.Supported && opts.AllowAutoContinue {
		st.RequiresUserConfirmation = false
	}
}

func excludedText(xs []ExcludedPart) string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		k := x.Source.Subtype
		if k == qwen.SubtypeChatCompression {
			k = "compressed history"
		}
		if k == "" {
			k = x.Source.Provenance.String()
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Describe is the status's stable multi-line text form (scenarios and the
// CLI print it). Part texts are printed in full: a resend is judged on exact
// bytes.
func (st RecoveryStatus) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: %s", st.Kind)
	if st.TailKind != st.Kind {
		fmt.Fprintf(&b, " (tail: %s)", st.TailKind)
	}
	fmt.Fprintf(&b, "\nmode: %s, trimmed %d\n", st.Mode, st.Trimmed)
	if st.Degraded != "" {
		fmt.Fprintf(&b, "degraded: %s\n", st.Degraded)
	}
	if st.SettledBy != "" {
		fmt.Fprintf(&b, "settled by: turn_result %s completed\n", st.SettledBy)
	}
	for _, c := range st.CancelledBy {
		fmt.Fprintf(&b, "cancelled: %s\n", c)
	}
	if st.ContinuationMode != "" {
		fmt.Fprintf(&b, "continuation: %s\n", st.ContinuationMode)
	}
	for _, p := range st.Resend {
		fmt.Fprintf(&b, "resend: %s", apihistory.DescribePart(p.Part))
		if p.Source.UUID != "" {
			fmt.Fprintf(&b, " from %s (%s)", p.Source.UUID, sourceProvenance(p.Source))
		}
		if p.Guessed {
			b.WriteString(" guessed")
		}
		b.WriteString("\n")
		if len(p.Part.Raw) > 0 {
			fmt.Fprintf(&b, "  raw: %s\n", p.Part.Raw)
		}
	}
	for _, x := range st.Excluded {
		fmt.Fprintf(&b, "excluded: %s from %s (%s): %s\n", apihistory.DescribePart(x.Part), orDash(x.Source.UUID), sourceProvenance(x.Source), x.Reason)
	}
	for _, c := range st.DanglingCalls {
		fmt.Fprintf(&b, "dangling: %s %s from %s\n", c.ID, c.Name, orDash(c.Source.UUID))
	}
	if st.IdlessCalls > 0 {
		fmt.Fprintf(&b, "id-less calls: %d\n", st.IdlessCalls)
	}
	fmt.Fprintf(&b, "canContinue: %t: %s\n", st.CanContinue, st.Reason)
	fmt.Fprintf(&b, "requiresUserConfirmation: %t\n", st.RequiresUserConfirmation)
	for _, a := range []struct {
		name string
		a    Action
	}{{"notice", st.Support.Notice}, {"offer", st.Support.Offer}, {"auto-execute", st.Support.AutoExecute}} {
		fmt.Fprintf(&b, "%s: %s: %s\n", a.name, map[bool]string{true: "yes", false: "no"}[a.a.Supported], a.a.Reason)
	}
	if st.Notice != "" {
		fmt.Fprintf(&b, "notice text: %s\n", st.Notice)
	}
	for _, g := range st.Guesses {
		fmt.Fprintf(&b, "guessed: %s\n", g)
	}
	if len(st.Dangling) > 0 {
		fmt.Fprintf(&b, "ledger in_flight: %s\n", strings.Join(st.Dangling, " "))
	}
	return b.String()
}

func sourceProvenance(s apihistory.Source) string {
	p := s.Provenance.String()
	if s.Origin == events.OriginNone {
		p = "no provenance"
	}
	if s.Subtype != "" {
		p = s.Subtype + ", " + p
	}
	if s.BackgroundTurn {
		p += ", background turn"
	}
	if s.DeliveredTurn {
		p += ", delivered"
	}
	return p
}

func sessionLabel(sid string) string {
	if sid == "" {
		return ""
	}
	return " " + sid
}
