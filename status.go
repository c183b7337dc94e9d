package tailproof

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/reconcile"
	"github.com/tailproof/tailproof/machines/recovery"
	"github.com/tailproof/tailproof/projections/ownership"
)

// The recovery plan's vocabulary, defined by machines/recovery.
type (
	PlanKind       = recovery.PlanKind
	ResendPart     = recovery.ResendPart
	ExcludedPart   = recovery.ExcludedPart
	Action         = recovery.Action
	Support        = recovery.Support
	RecoveryStatus = recovery.Status
	// TranscriptState is RecoveryStatus.Transcript: present, missing or
	// empty.
	TranscriptState = recovery.TranscriptState
)

// Transcript states (see machines/recovery).
const (
	TranscriptPresent = recovery.TranscriptPresent
	TranscriptMissing = recovery.TranscriptMissing
	TranscriptEmpty   = recovery.TranscriptEmpty
)

// Plan kinds and continuation modes (see machines/recovery).
const (
	PlanClean             = recovery.PlanClean
	PlanInterruptedPrompt = recovery.PlanInterruptedPrompt
	PlanInterruptedTurn   = recovery.PlanInterruptedTurn
	PlanDegradedHistory   = recovery.PlanDegradedHistory
	ModeRetryUserParts    = recovery.ModeRetryUserParts
	ModeToolResultParts   = recovery.ModeToolResultParts
	InterruptedToolReason = recovery.InterruptedToolReason
)

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

// ErrNoTranscript classifies a session whose transcript cannot be read at
// all (a read error other than its absence): there is no history to recover
// from. A missing transcript is not an error: Status answers with
// Transcript TranscriptMissing.
var ErrNoTranscript = errors.New("transcript unreadable")

// Status reads sessionID's transcript (and, optionally, ledger) and says what
// its tail means for recovery: the plan kind, the exact parts a continuation
// would send, whether one may start now and why, and which of notice / offer
// / auto-execute the evidence supports.
//
// Status drives the same reconcile core as Reconcile over one walk of the
// chain: the prompt whose turn_result it consults is the core's target, and
// the tail is classified by the same interruption.ClassifyTail over the
// core's own history fold, so the two cannot pick different prompts or
// different ends of the history. The plan itself is machines/recovery's.
func Status(ctx context.Context, store adapters.TranscriptStore, sessionID string, opts StatusOptions) (RecoveryStatus, error) {
	rules := reconcile.Tailproof()
	if opts.Reference {
		rules = reconcile.Qwen0244()
	}
	in := recovery.Input{SessionID: sessionID, Owners: opts.Owners, Mode: rules.Trim, Identity: rules.Identity, AllowAutoContinue: opts.AllowAutoContinue}
	tracef := func(format string, args ...any) { in.Trace = append(in.Trace, fmt.Sprintf(format, args...)) }
	fail := func(err error) (RecoveryStatus, error) {
		return RecoveryStatus{SessionID: sessionID, Transcript: in.Transcript, Owners: opts.Owners, Mode: rules.Trim, Dangling: in.Dangling, Trace: in.Trace}, err
	}

	rin := reconcile.Input{Rules: rules}
	if ws, ok := store.(adapters.WorkspaceStore); ok {
		rin.Workspace = ws.Workspace() // as Reconcile: the pending verdict is the same
	}
	core := reconcile.New(rin)
	last := &lastPrompt{core: core, ledgerRead: opts.Ledger != nil}
	if opts.Ledger != nil {
		if err := feedLedger(ctx, opts.Ledger, sessionID, core, last.addLedger); err != nil {
			return fail(fmt.Errorf("tailproof: status%s: %w", sessionLabel(sessionID), err))
		}
		in.Dangling = core.Dangling()
		tracef("fold ledger: dangling [%s]", strings.Join(in.Dangling, " "))
	} else {
		core.EndLedger(0, 0, 0)
	}

	// Without payloads, as Reconcile walks: fillPayloads reads back only
	// the records of the parts the plan prints.
	chain, err, werr := walkTranscript(ctx, store, sessionID, qwen.LoadOptions{MaxLineBytes: opts.MaxLineBytes}, last)
	switch {
	case err != nil && errors.Is(err, adapters.ErrNotFound):
		// A kill right after admission leaves no transcript: the history
		// is empty, and the core decides the pending prompt exactly as
		// Reconcile does over a missing transcript (feedTranscript).
		if noArchive(ctx, store, sessionID) {
			core.TranscriptNeverCreated()
			core.EndChain(&qwen.Chain{}, nil)
		} else {
			core.ChainUnavailable(err, true)
		}
		in.Transcript = recovery.TranscriptMissing
		tracef("fold transcript: missing")
	case err == nil && werr == nil:
		noteEmpty(ctx, store, sessionID, chain, core)
		core.EndChain(chain, nil)
		if len(chain.Gaps) > 0 || rules.StrictChain {
			in.Degraded = chain.Degraded()
		}
		in.Transcript = recovery.TranscriptPresent
		if chain.Objects == 0 && len(chain.BadLines) == 0 {
			in.Transcript = recovery.TranscriptEmpty
		}
		in.History = core.History()
		tracef("fold transcript: chain %d records, %d gaps, history %d entries", chain.Len, len(chain.Gaps), in.History.Total)
	default:
		if err == nil {
			err = werr
		}
		return fail(fmt.Errorf("tailproof: status%s: %w: %w", sessionLabel(sessionID), ErrNoTranscript, err))
	}
	in.Target = core.Target()
	in.TurnResult = core.TurnResult(in.Target)
	if len(in.Dangling) > 0 {
		in.Pending = pendingOf(core.Ready(), in.Target)
		tracef("reconcile core: %s %s%s", in.Target, in.Pending.Outcome, orNothing(": ", in.Pending.Why))
	}
	in.Last = last.input(rules, in.Target)
	st := recovery.Plan(in)
	if err := fillPayloads(ctx, store, sessionID, &st, opts.MaxLineBytes); err != nil {
		return fail(fmt.Errorf("tailproof: status%s: %w: %w", sessionLabel(sessionID), ErrNoTranscript, err))
	}
	fillTurnParts(&st)
	return st, nil
}

// pendingOf is the core's decision for target, before the fence and the
// clock: the verdict `reconcile` reaches for the same prompt.
func pendingOf(rd reconcile.Ready, target string) recovery.Pending {
	for _, d := range rd.Decisions {
		if d.Target != target {
			continue
		}
		p := recovery.Pending{Prompt: target, Outcome: recovery.OutcomeUnknown}
		switch d.State {
		case reconcile.ProvenCompleted:
			p.Outcome = recovery.OutcomeCompleted
		case reconcile.ProvenInterrupted:
			p.Outcome = recovery.OutcomeInterrupted
			p.NotStarted = d.Route == reconcile.EvNotDispatched || d.Route == reconcile.EvOwnRecordAbsent
		case reconcile.ProvenSettled:
			p.Outcome = recovery.OutcomeSettled
		default:
			why := make([]string, len(d.Vetoes))
			for i, v := range d.Vetoes {
				why[i] = v.String()
			}
			p.Why = strings.Join(why, "; ")
		}
		return p
	}
	return recovery.Pending{}
}

func orNothing(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func sessionLabel(sid string) string {
	if sid == "" {
		return ""
	}
	return " " + sid
}
