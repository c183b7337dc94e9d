package tailproof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/projections/interruption"
	"github.com/tailproof/tailproof/projections/ledgerview"
)

// Verdict is the outcome of a reconciliation.
type Verdict string

const (
	VerdictCompleted   Verdict = "completed"
	VerdictInterrupted Verdict = "interrupted"
	VerdictUnknown     Verdict = "unknown" // evidence could not prove a verdict; nothing appended
	VerdictNone        Verdict = "none"    // no prompt was dangling; nothing to do
)

// Options configure Reconcile.
type Options struct {
	// Now returns the current time in Unix milliseconds; it stamps the
	// appended record's `at`. Required: the core reads no clock.
	Now func() int64
	// DryRun decides without appending; Decision.Appended is the record that
	// would have been written.
	DryRun bool
	// Reference runs exactly the rules of Qwen Code 0.24.4: no ownership
	// evidence, the notification trim by content shape only, undecodable
	// transcript lines skipped, no system-provenance guard. Used to score the
	// reference and to check conformance against it.
	Reference bool
	// Guards are extra evidence guards a harness adds; they run after the
	// built-in ones at the evidence check.
	Guards []guards.Guard[*guards.Evidence]
	// MaxLineBytes bounds a transcript line (<= 0: events.DefaultMaxLineBytes).
	MaxLineBytes int
}

// Decision is what Reconcile decided and why.
type Decision struct {
	SessionID string
	Target    string // the prompt decided on; "" when none was dangling
	Verdict   Verdict
	// Appended is the ledger record appended (with DryRun: that would have
	// been appended); nil unless the verdict is completed or interrupted.
	Appended *ledger.Record
	// Line is Appended's exact bytes, without the newline.
	Line   []byte
	Vetoes []guards.Veto
	// State is the reconcile machine's final state.
	State string
	// Trace lists, in order, the folds and transitions that led here.
	Trace    []string
	Evidence *guards.Evidence
}

// ErrUnreadableLedger classifies a ledger that could not be read; nothing is
// appended.
var ErrUnreadableLedger = errors.New("ledger unreadable")

// Reconcile decides, for the prompt left in_flight in sessionID's ledger,
// whether it completed, was interrupted or cannot be known, and appends a
// terminal only when the evidence proves it. Running it twice appends nothing
// the second time: the first terminal settles the prompt.
//
// An unknown verdict is not an error. Errors are returned only for a ledger
// that cannot be read or an append that failed; nothing is appended then.
func Reconcile(ctx context.Context, store adapters.Store, sessionID string, opts Options) (Decision, error) {
	if opts.Now == nil {
		return Decision{}, errors.New("tailproof: Options.Now is required (the core reads no clock)")
	}
	r := &reconciler{ctx: ctx, store: store, sid: sessionID, opts: opts, ev: &guards.Evidence{}}
	r.m = reconcileMachines.Get().(*machines.Machine[*guards.Evidence])
	r.m.Reset(r.guards().For)
	defer reconcileMachines.Put(r.m)
	return r.run()
}

// reconcileMachines reuses reconcile machines across decisions: building
// looplab's tables is a fixed cost per call that dominated small sessions.
// A machine is Reset (state, trace, guards) before each use and never
// escapes its decision: Decision copies what it needs.
var reconcileMachines = sync.Pool{New: func() any {
	return machines.NewReconcile(machines.ReconcileGuards{})
}}

type reconciler struct {
	ctx   context.Context
	store adapters.Store
	sid   string
	opts  Options
	ev    *guards.Evidence
	m     *machines.Machine[*guards.Evidence]
	trace []string

	// The transcript's active chain, indexed once per decision (pass 1) and
	// shared by every walk over it.
	chain    *qwen.Chain
	chainErr error
	loaded   bool

	// pred is the latest completed predecessor (dispatch-evidence checks that
	// the transcript shows its turn where the ledger puts it).
	pred struct {
		admission, terminal ledger.Record
		ok                  bool
	}
}

func (r *reconciler) openTranscript() (io.ReadCloser, error) {
	return r.store.OpenTranscript(r.ctx, r.sid)
}

// loadChain indexes the transcript's active chain the first time it is asked for.
func (r *reconciler) loadChain() (*qwen.Chain, error) {
	if !r.loaded {
		r.chain, r.chainErr = qwen.LoadChain(r.openTranscript, qwen.LoadOptions{MaxLineBytes: r.opts.MaxLineBytes})
		r.loaded = true
	}
	return r.chain, r.chainErr
}

func (r *reconciler) tracef(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf(format, args...))
}

func (r *reconciler) guards() machines.ReconcileGuards {
	switch {
	case len(r.opts.Guards) > 0 && r.opts.Reference:
		return machines.ReferenceReconcileGuards(r.opts.Guards...)
	case len(r.opts.Guards) > 0:
		return machines.DefaultReconcileGuards(r.opts.Guards...)
	case r.opts.Reference:
		return referenceGuards
	}
	return defaultGuards
}

// The built-in guard sets are values; built once, not per decision.
var (
	defaultGuards   = machines.DefaultReconcileGuards()
	referenceGuards = machines.ReferenceReconcileGuards()
)

func (r *reconciler) decision(v Verdict) Decision {
	d := Decision{SessionID: r.sid, Target: r.ev.Target, Verdict: v, State: r.m.Current(), Evidence: r.ev}
	for _, s := range r.m.Trace() {
		d.Vetoes = append(d.Vetoes, s.Vetoes...)
	}
	d.Trace = r.trace
	return d
}

// fire runs one guarded step; on a veto it moves the machine to unknown.
func (r *reconciler) fire(event string) bool {
	err := r.m.Fire(r.ctx, event, r.ev)
	if s, ok := r.m.Last(); ok {
		r.trace = append(r.trace, "machine "+s.Describe())
	}
	if err == nil {
		return true
	}
	var v *machines.VetoError
	if !errors.As(err, &v) {
		r.tracef("machine error: %v", err)
	}
	if gerr := r.m.Fire(r.ctx, machines.EvGiveUp, r.ev); gerr == nil {
		if s, ok := r.m.Last(); ok {
			r.trace = append(r.trace, "machine "+s.Describe())
		}
	}
	return false
}

// readLedger streams the ledger into fn (nil: count only) and returns the
// number of records and of malformed lines dropped.
func (r *reconciler) readLedger(fn func(ledger.Record)) (int, int, error) {
	rc, err := r.store.OpenLedger(r.ctx, r.sid)
	if err != nil {
		return 0, 0, fmt.Errorf("tailproof: %w: %v", ErrUnreadableLedger, err)
	}
	defer rc.Close()
	n, dropped, err := ledger.ReadEach(rc, false, fn)
	if err != nil {
		return 0, 0, fmt.Errorf("tailproof: %w: %v", ErrUnreadableLedger, err)
	}
	return n, dropped, nil
}

func (r *reconciler) run() (Decision, error) {
	view := ledgerview.New()
	var clock clockStep
	n, dropped, err := r.readLedger(func(rec ledger.Record) {
		view.Add(rec)
		clock.add(rec)
	})
	if err != nil {
		return Decision{SessionID: r.sid, Verdict: VerdictUnknown}, err
	}
	ev := r.ev
	ev.LedgerLen, ev.LedgerDropped, ev.Dangling = n, dropped, view.Dangling()
	r.tracef("fold ledger: %d records, %d malformed dropped, dangling [%s]", n, dropped, strings.Join(ev.Dangling, " "))

	if len(ev.Dangling) == 0 {
		r.fire(machines.EvNothing)
		return r.decision(VerdictNone), nil
	}
	ev.Target = ev.Dangling[0]
	several := len(ev.Dangling) > 1 && !r.opts.Reference
	if several {
		ev.Target = r.tailOwner(view)
	}
	if !r.fire(machines.EvSelect) {
		return r.decision(VerdictUnknown), nil
	}
	ev.Admission, ev.HasAdmission = view.LatestUnsettledAdmission()
	if several {
		// With several dangling prompts, ordering cannot attribute the tail;
		// identity can (SeveralDangling). The target's own admission is the
		// one its marker and clock come from.
		ev.Admission, ev.HasAdmission = view.UnsettledAdmission(ev.Target)
	}
	if ev.HasAdmission {
		r.tracef("fold ledger: latest unsettled admission %s", ev.Admission.Describe())
	}
	if !r.fire(machines.EvAttribute) {
		return r.decision(VerdictUnknown), nil
	}
	ev.OtherTerminal, ev.HasOtherTerm = view.LatestOtherTerminalAt(ev.Target)
	ev.PredecessorTerminal, ev.HasPredTerm = view.LatestPredecessorTerminalAt(ev.Target)
	r.pred.admission, r.pred.terminal, r.pred.ok = view.LatestCompletedPredecessor(ev.Target)
	ev.LedgerClockStep = clock.step
	for _, d := range view.DeadlineExceeded() {
		if d.PromptID != ev.Target {
			ev.OtherDeadlines = append(ev.OtherDeadlines, d)
		}
	}

	hist := r.readTranscript()
	if !r.fire(machines.EvCheck) {
		return r.decision(VerdictUnknown), nil
	}
	r.classify(hist)
	if !r.fire(machines.EvClassify) {
		return r.decision(VerdictUnknown), nil
	}

	rec := ledger.Terminal(ev.Target, ledger.Completed, "", ledger.StopReconstructed, 0)
	verdict := VerdictCompleted
	if ev.Verdict.Interrupted {
		rec = ledger.Terminal(ev.Target, ledger.Interrupted, ledger.CodeDaemonLost, "", 0)
		verdict = VerdictInterrupted
	}
	refetch, _, rerr := r.readLedger(nil)
	ev.RefetchLen = refetch
	if rerr != nil {
		ev.RefetchErr = rerr.Error()
	}
	if !r.fire(machines.EvCommit) {
		return r.decision(VerdictUnknown), nil
	}
	rec.At = r.opts.Now()
	line := ledger.Encode(rec)
	d := r.decision(verdict)
	d.Appended, d.Line = &rec, line
	if r.opts.DryRun {
		r.tracef("dry run: would append %s", line)
		d.Trace = r.trace
		return d, nil
	}
	if err := r.store.AppendLedger(r.ctx, r.sid, line); err != nil {
		d.Appended, d.Line = nil, nil
		return d, fmt.Errorf("tailproof: append terminal for %s: %w", ev.Target, err)
	}
	r.tracef("appended %s", line)
	d.Trace = r.trace
	return d, nil
}

// tailOwner picks the target among several dangling prompts: the one whose
// own prompt record (daemonPromptId) is the last prompt record on the chain —
// the prompt that was running when the daemon died — or, without identities,
// the last-admitted unsettled prompt. It costs one extra walk of the chain
// (the index is shared), only when several prompts dangle. SeveralDangling then requires identity to
// prove the choice.
func (r *reconciler) tailOwner(view *ledgerview.View) string {
	fallback := r.ev.Dangling[0]
	if adm, ok := view.LatestUnsettledAdmission(); ok && slices.Contains(r.ev.Dangling, adm.PromptID) {
		fallback = adm.PromptID
	}
	chain, err := r.loadChain()
	if err != nil {
		return fallback
	}
	last := ""
	if chain.Walk(r.openTranscript, func(_ int, e events.Event) error {
		if rec, ok := e.Body.(*qwen.Record); ok && attribution.IsPromptRecord(rec) && rec.DaemonPromptID != "" {
			last = rec.DaemonPromptID
		}
		return nil
	}) != nil || !slices.Contains(r.ev.Dangling, last) {
		return fallback
	}
	if last != fallback {
		r.tracef("several dangling: %s's own prompt record is the transcript's last; deciding it", last)
	}
	return last
}

// readTranscript folds the active chain into the evidence and api-history
// folds: in one streaming pass with the chain index when the chain is
// linear, else after it (qwen.Scan).
func (r *reconciler) readTranscript() *apihistory.Fold {
	ev := r.ev
	ev.Transcript.MarkerIdx = -1
	ev.Transcript.Ownership.TargetIdx = -1
	var (
		fold *attribution.Fold
		acc  *apihistory.Fold
	)
	reset := func() {
		fold = attribution.New(ev.Target, ev.Admission.TailUUID, ev.Admission.AtFloat())
		if r.pred.ok {
			fold.WatchPredecessor(r.pred.admission.AtFloat(), r.pred.terminal.AtFloat())
		}
		acc = apihistory.New(apihistory.Options{})
	}
	reset()
	visit := func(_ int, e events.Event) error {
		fold.Add(e)
		return acc.Add(e)
	}
	// One streaming pass when the chain is linear (qwen.Scan), unless an
	// earlier step already indexed the chain; Scan's chain is shared by
	// later walks as LoadChain's is.
	var werr error
	chain, err := r.chain, r.chainErr
	if !r.loaded {
		chain, werr = qwen.Scan(r.openTranscript, qwen.LoadOptions{MaxLineBytes: r.opts.MaxLineBytes}, visit, reset)
		if chain == nil {
			err, werr = werr, nil
		}
		r.chain, r.chainErr, r.loaded = chain, err, true
	} else if err == nil {
		werr = chain.Walk(r.openTranscript, visit)
	}
	if err != nil {
		if errors.Is(err, adapters.ErrNotFound) {
			ev.Transcript.LoadErr = "transcript missing"
		} else {
			ev.Transcript.LoadErr = err.Error()
		}
		r.tracef("fold transcript: %s", ev.Transcript.LoadErr)
		return nil
	}
	t := fold.Evidence()
	if r.opts.Reference {
		t = fold.ReferenceEvidence()
	}
	t.Gaps = len(chain.Gaps)
	for _, bad := range chain.BadLines {
		if errors.Is(bad, events.ErrTornTail) {
			t.TornTail = true
			continue
		}
		if !r.opts.Reference {
			t.BadLines = append(t.BadLines, bad.Pos.String())
		}
	}
	if chain.Degraded() != "" && !r.opts.Reference {
		t.Degraded = chain.Degraded()
	}
	switch {
	case werr != nil:
		t.Loaded, t.LoadErr = false, werr.Error()
	case t.ChainLen == 0:
		t.Loaded, t.LoadErr = false, "no conversation records on the active chain"
	}
	if why := r.foreignWorkspace(chain); why != "" && t.LoadErr == "" {
		t.Loaded, t.LoadErr = false, why
	}
	ev.Transcript = t
	r.tracef("fold transcript: chain %d records, %d gaps, marker %s, last visible %s@%d, after admission %d (visible %d, non-system %d)",
		t.ChainLen, t.Gaps, markerText(t), orDash(t.LastVisibleType), t.LastVisibleMs, t.AfterAdmission, t.VisibleAfter, t.NonSystemAfter)
	if o := t.Ownership; o.Active {
		r.tracef("fold transcript: ownership target record #%d, followed by %q, turn_result %q", o.TargetIdx, o.FollowedBy, o.TurnResult)
	}
	return acc
}

// foreignWorkspace applies Qwen Code's loadSession membership check when the
// store knows its workspace: the transcript's first record must have been
// written in that workspace (or in one of its .qwen/worktrees). Different
// workspaces can share a chats directory (/a/b and /a-b sanitize alike), and
// a record without a cwd makes the reference's loader throw. Qwen's third
// way in — a runtime-status file naming the session — is not read.
func (r *reconciler) foreignWorkspace(chain *qwen.Chain) string {
	ws, ok := r.store.(adapters.WorkspaceStore)
	if !ok || ws.Workspace() == "" || !chain.HasFirst {
		return ""
	}
	want, got := ws.Workspace(), chain.FirstCwd
	if got == want {
		return ""
	}
	const marker = "/.qwen/worktrees/"
	if i := strings.LastIndex(got, marker); i > 0 && got[:i] == want {
		return ""
	}
	if got == "" {
		return "the transcript's first record has no cwd"
	}
	return fmt.Sprintf("the transcript's first record was written in workspace %q, not %q", got, want)
}

func (r *reconciler) classify(acc *apihistory.Fold) {
	ev := r.ev
	if ev.Transcript.Ownership.TurnResult == "completed" {
		ev.Verdict = guards.Classification{Done: true, Kind: "none", FromTurnResult: true}
		r.tracef("classify: the transcript's turn_result for %s says completed", ev.Target)
		return
	}
	if t := ev.Transcript; !r.opts.Reference && t.LocalCommandDone && t.AfterLocalCommand == 0 {
		// The target's turn was a local slash command, answered after its
		// admission with nothing visible after it: whatever the tail shows
		// once the command is popped belongs to an earlier turn.
		ev.Verdict = guards.Classification{Done: true, Kind: "none", FromLocalCommand: true}
		r.tracef("classify: a local slash command answered %s after its admission", ev.Target)
		return
	}
	if t := ev.Transcript; !r.opts.Reference && t.NotDispatched && !t.Ownership.Active {
		// No prompt record after the target's marker: its turn never started
		// (or what it wrote was lost with the tail). The tail is another
		// turn's — a background turn, a predecessor still streaming, a
		// deadline-released agent — and says nothing about the target.
		ev.Verdict = guards.Classification{Done: true, Kind: "not_started", Interrupted: true, FromNotDispatched: true}
		r.tracef("classify: no prompt record after %s's admission marker %s: its turn never started", ev.Target, t.MarkerUUID)
		return
	}
	mode := interruption.Provenance
	if r.opts.Reference {
		mode = interruption.ShapeOnly
	}
	// The one classifier boundary: status computes the same tail through the
	// same function (ClassifyTail), so the two can never disagree.
	c := ClassifyTail(acc.Result(), mode)
	tail, v, upgrade := c.Tail, c.Verdict, c.IdlessUpgrade
	ev.Verdict = guards.Classification{
		Done: true, Kind: v.Kind.String(), IdlessUpgrade: upgrade,
		Interrupted: v.Kind != interruption.KindNone || upgrade, Guessed: tail.Guessed,
	}
	r.tracef("classify: %s over %d tail entries (trimmed %d notifications%s)%s", v.Kind, len(tail.Entries), tail.Trimmed,
		map[bool]string{true: ", by shape", false: ""}[tail.Guessed], map[bool]string{true: ", upgraded: tail holds a functionCall", false: ""}[upgrade])
}

// clockStep finds the first ledger record whose `at` is earlier than an
// earlier record's.
type clockStep struct {
	step string
	max  ledger.Record
	seen bool
}

func (c *clockStep) add(rec ledger.Record) {
	switch {
	case !c.seen:
		c.max, c.seen = rec, true
	case c.step == "" && rec.AtFloat() < c.max.AtFloat():
		c.step = fmt.Sprintf("%s is earlier than %s", rec.Describe(), c.max.Describe())
	case rec.AtFloat() > c.max.AtFloat():
		c.max = rec
	}
}

func markerText(t guards.TranscriptEvidence) string {
	switch {
	case t.MarkerUUID == "":
		return "none"
	case t.MarkerIdx < 0:
		return t.MarkerUUID + " (absent)"
	}
	return fmt.Sprintf("%s at #%d", t.MarkerUUID, t.MarkerIdx)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RecentTerminalsTailBytes is the reference's RECENT_TERMINALS_TAIL_BYTES.
const RecentTerminalsTailBytes = 256 << 10

// RecentTerminals returns the last 64 terminal records, read from the
// ledger's last 256 KiB exactly as the reference's load response does (the
// window's first line is always dropped). A missing ledger yields none.
func RecentTerminals(ctx context.Context, store adapters.LedgerStore, sessionID string) ([]ledger.Record, error) {
	rc, windowed, err := store.OpenLedgerTail(ctx, sessionID, RecentTerminalsTailBytes)
	if err != nil {
		return nil, fmt.Errorf("tailproof: %w: %v", ErrUnreadableLedger, err)
	}
	defer rc.Close()
	v := ledgerview.New()
	if _, _, err := ledger.ReadEach(rc, windowed, v.Add); err != nil {
		return nil, fmt.Errorf("tailproof: %w: %v", ErrUnreadableLedger, err)
	}
	return v.RecentTerminals(), nil
}
