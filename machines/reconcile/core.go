package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/projections/ledgerview"
)

// Verdict is the outcome of one prompt's reconciliation.
type Verdict string

// Verdicts.
const (
	VerdictCompleted   Verdict = "completed"
	VerdictInterrupted Verdict = "interrupted"
	// VerdictCancelled / VerdictError: the prompt's own turn_result settled
	// it; the appended terminal is exactly the one the daemon would have
	// written (ADR 0026).
	VerdictCancelled Verdict = "cancelled"
	VerdictError     Verdict = "error"
	VerdictUnknown   Verdict = "unknown" // evidence could not prove a verdict; nothing appended
	VerdictNone      Verdict = "none"    // no prompt was dangling; nothing to do
)

// Decision is what the core decided for one dangling prompt and why.
type Decision struct {
	Target  string
	Verdict Verdict
	// Route is the classification transition that proved the verdict (""
	// when the decision stopped before classification).
	Route Event
	// Appended is the terminal record to append (the façade stamps its At
	// and appends it; with a dry run it is what would have been appended);
	// nil unless the verdict is completed or interrupted.
	Appended *ledger.Record
	// Line is Appended's exact bytes, without the newline (set by the
	// façade once At is stamped).
	Line   []byte
	Vetoes []guards.Veto
	// State is the machine's final state for this prompt.
	State State
	// Steps are the machine's transitions, in order.
	Steps []machines.Step
	// Trace lists, in order, the folds and transitions that led here.
	Trace    []string
	Evidence *guards.Evidence
}

// Ready is the work the core hands its caller (raft's Ready): the decisions
// so far and, when some prompt's verdict is proven, the fence the caller
// must check before appending anything.
type Ready struct {
	Decisions []Decision
	// NeedFence: some verdict is proven; measure the ledger's size now and
	// pass it to Commit, which fires the commit step and returns the final
	// decisions. LedgerSize is the size the decision was made from.
	NeedFence  bool
	LedgerSize int64
	// Trace is the session-level trace (the ledger fold).
	Trace []string
}

// Input is what the core needs besides the evidence itself.
type Input struct {
	Rules Rules
	// Workspace is the workspace the store serves ("" when it does not
	// know): the transcript's first record must have been written there.
	Workspace string
	// NoTrace leaves every Trace empty (Ready's, each Decision's) and skips
	// formatting it: for callers that read only verdicts, steps and vetoes,
	// such as the simulator. The decisions are the same either way.
	NoTrace bool
}

// Core decides a session's dangling prompts from evidence fed to it, and
// does nothing else: no store, no io, no clock, no context. Feed the
// ledger (AddLedger, EndLedger); if NeedsTranscript, feed one walk of the
// active chain (StartChain, AddChainEvent, EndChain — or ChainUnavailable);
// take Ready; when it asks for the fence, measure it and call Commit. A Core
// decides once.
type Core struct {
	in      Input
	view    *ledgerview.View
	clock   clockStep
	records int
	dropped int
	size    int64

	dangling []string
	several  bool // several prompts dangle and the rules decide more than the first
	cands    []*candidate
	trace    []string

	// The one walk of the active chain.
	acc            *apihistory.Fold
	lastIdentified string
	turnResults    map[string]string // daemon prompt id -> its last turn_result state
	walked         bool              // EndChain or ChainUnavailable was called
	unavailable    bool              // ChainUnavailable was called
	chainOK        bool              // the chain was loaded and walked without error
	empty          bool              // TranscriptEmpty or TranscriptNeverCreated was called
	neverCreated   bool              // TranscriptNeverCreated was called
	// wrote: the ledger shows the transcript held records once — an
	// admission with a tailUuid, or a terminal other than interrupted (a
	// settled turn wrote at least its prompt record).
	wrote        bool
	fingerprints bool // the api-history fold counts old ids by fingerprints

	ready   Ready
	readied bool // Ready ran: the machines have stepped

	danglingSet map[string]struct{} // c.dangling as a set (noteTurnResult)
}

// candidate is one dangling prompt under decision, with its own evidence
// and attribution fold.
type candidate struct {
	ev      *guards.Evidence
	fold    *attribution.Fold
	pred    struct{ admission, terminal float64 } // `at` of each
	hasPred bool
	d       Decision
	// hist is the api history as it stood when the candidate's own turn
	// ended by call identity (nil: its turn runs to the chain's end).
	hist *apihistory.Result
}

// New returns a core for one reconciliation.
func New(in Input) *Core {
	return &Core{in: in, view: ledgerview.New()}
}

// CompactLedger makes the core fold the ledger into a compact view
// (ledgerview.NewCompact: exact ids and facts for the recent and the open
// prompts, fingerprints for the rest). Call it before the first AddLedger;
// after EndLedger, LedgerExact says whether the fold proved its answers — when
// it did not, the ledger must be folded again into a core without it.
func (c *Core) CompactLedger() { c.view = ledgerview.NewCompact(0) }

// NewCompact is New followed by CompactLedger, without building the exact
// view CompactLedger would discard (an allocation per reconciliation).
func NewCompact(in Input) *Core {
	return &Core{in: in, view: ledgerview.NewCompact(0)}
}

// LedgerExact reports whether the ledger fold's answers are proven: always
// without CompactLedger (see ledgerview.View.Exact). Call it after EndLedger.
func (c *Core) LedgerExact() bool { return c.view.Exact() }

// AddLedger folds one ledger record, in file order.
func (c *Core) AddLedger(rec ledger.Record) {
	c.wrote = c.wrote || rec.TailUUID != "" || rec.IsTerminal() && rec.Terminal != ledger.Interrupted
	c.view.Add(rec)
	c.clock.add(rec)
}

// EndLedger ends the ledger: records and dropped are the reader's counts,
// size the bytes read (the fence compares it with the size at commit).
func (c *Core) EndLedger(records, dropped int, size int64) {
	c.records, c.dropped, c.size = records, dropped, size
	// Every question about a particular prompt is asked here: a compact
	// view may then drop its retired prompts' fingerprints (Seal).
	defer c.view.Seal()
	c.dangling = c.view.Dangling()
	if !c.in.NoTrace {
		c.tracef("fold ledger: %d records, %d malformed dropped, dangling [%s]", records, dropped, strings.Join(c.dangling, " "))
	}
	if len(c.dangling) == 0 {
		return
	}
	ids := c.dangling[:1]
	if c.in.Rules.Dangling != FirstOnly && len(c.dangling) > 1 {
		c.several, ids = true, c.dangling
	}
	for _, id := range ids {
		c.cands = append(c.cands, c.newCandidate(id))
	}
}

func (c *Core) newCandidate(id string) *candidate {
	ev := &guards.Evidence{LedgerLen: c.records, LedgerDropped: c.dropped, Dangling: c.dangling, Target: id, LedgerSize: c.size}
	ev.Admission, ev.HasAdmission = c.view.LatestUnsettledAdmission()
	if c.several {
		// With several dangling prompts, ordering cannot attribute the tail;
		// identity can (SeveralDangling). The prompt's own admission is the
		// one its marker and clock come from.
		ev.Admission, ev.HasAdmission = c.view.UnsettledAdmission(id)
	}
	ev.OtherTerminal, ev.HasOtherTerm = c.view.LatestOtherTerminalAt(id)
	ev.PredecessorTerminal, ev.HasPredTerm = c.view.LatestPredecessorTerminalAt(id)
	ev.LedgerClockStep = c.clock.step
	for _, d := range c.view.DeadlineExceeded() {
		if d.PromptID != id {
			ev.OtherDeadlines = append(ev.OtherDeadlines, d)
		}
	}
	cd := &candidate{ev: ev, d: Decision{Target: id, Verdict: VerdictUnknown, State: Loaded, Evidence: ev}}
	cd.pred.admission, cd.pred.terminal, cd.hasPred = c.view.LatestCompletedPredecessor(id)
	return cd
}

// Dangling returns the ledger's dangling prompts, in admission order.
func (c *Core) Dangling() []string { return c.dangling }

// OpenAdmissionAt is the `at` of id's last in_flight record while id is
// open (its latest record is in_flight), from the ledger folded so far.
func (c *Core) OpenAdmissionAt(id string) (float64, bool) {
	r, ok := c.view.OpenAdmission(id)
	return r.AtFloat(), ok
}

// NeedsTranscript reports whether the decision needs the transcript: some
// prompt dangles whose selection and attribution the ledger alone does not
// already refuse (with several dangling prompts under TailOwner, the
// transcript chooses the target, so it is always needed).
func (c *Core) NeedsTranscript() bool {
	if len(c.cands) == 0 {
		return false
	}
	if c.several {
		return true
	}
	for _, cd := range c.cands {
		if allows(c.in.Rules.Guards.Select, cd.ev) && allows(c.in.Rules.Guards.Attribute, cd.ev) {
			return true
		}
	}
	return false
}

func allows(g guards.Guard[*guards.Evidence], ev *guards.Evidence) bool {
	return g == nil || len(g.Check(ev)) == 0
}

// StartChain (re)starts the walk of the active chain with fresh folds: a
// reader that finds the chain is not what it streamed calls it again and
// walks from the start.
func (c *Core) StartChain() {
	c.acc = apihistory.New(apihistory.Options{Fingerprints: c.fingerprints})
	c.lastIdentified = ""
	c.turnResults = map[string]string{}
	for _, cd := range c.cands {
		ev := cd.ev
		cd.hist = nil
		cd.fold = attribution.New(ev.Target, ev.Admission.TailUUID, ev.Admission.AtFloat())
		if cd.hasPred {
			cd.fold.WatchPredecessor(cd.pred.admission, cd.pred.terminal)
		}
	}
}

// AddChainEvent folds the next active-chain record into every candidate's
// attribution fold, the api history and the tail-owner fold. Its error
// (an event that is not a transcript record) ends the walk.
func (c *Core) AddChainEvent(e events.Event) error {
	if c.acc == nil {
		c.StartChain()
	}
	if rec, ok := e.Body.(*qwen.Record); ok {
		if id := attribution.PromptIdentity(rec); id != "" {
			c.lastIdentified = id
		}
		if rec.Type == qwen.TypeSystem && rec.TurnResult != nil {
			c.noteTurnResult(rec.TurnResult)
		}
	}
	for _, cd := range c.cands {
		before := cd.fold.TurnEndIdx()
		cd.fold.Add(e)
		if after := cd.fold.TurnEndIdx(); after != before && c.in.Rules.Identity {
			// The record just folded ended (or, revoked, resumed) the
			// candidate's own turn: its tail is the history before it.
			cd.hist = nil
			if after >= 0 {
				res := c.acc.Result()
				cd.hist = &res
			}
		}
	}
	return c.acc.Add(e)
}

// noteTurnResult remembers a turn_result's state for TurnResult. Only a
// dangling prompt can be the Target when any dangles, so only theirs are kept
// then; the key and state are cloned, because a record's strings share one
// allocation and a key aliasing it kept every turn_result record of the
// chain alive (a 1 GiB transcript of short turns held ~90 MiB that way).
func (c *Core) noteTurnResult(t *qwen.TurnResult) {
	if len(c.dangling) > 0 && !c.isDangling(t.PromptID) {
		return
	}
	if old, ok := c.turnResults[t.PromptID]; ok && old == t.State {
		return
	}
	c.turnResults[strings.Clone(t.PromptID)] = strings.Clone(t.State)
}

func (c *Core) isDangling(id string) bool {
	if c.danglingSet == nil {
		c.danglingSet = make(map[string]struct{}, len(c.dangling))
		for _, d := range c.dangling {
			c.danglingSet[d] = struct{}{}
		}
	}
	_, ok := c.danglingSet[id]
	return ok
}

// ChainUnavailable ends the transcript phase for a transcript that could not
// be indexed: missing (not found) or unreadable (err).
func (c *Core) ChainUnavailable(err error, missing bool) {
	c.walked, c.unavailable = true, true
	why := "transcript missing"
	if !missing {
		why = err.Error()
	}
	for _, cd := range c.cands {
		cd.ev.Transcript = guards.TranscriptEvidence{LoadErr: why, MarkerIdx: -1}
		cd.ev.Transcript.Ownership.TargetIdx, cd.ev.Transcript.Ownership.TurnEndIdx = -1, -1
	}
	c.acc = nil
}

// TranscriptEmpty tells the core, before EndChain, that the transcript
// exists, holds no byte of a record, and has no archived copy. Qwen Code
// 0.24.4 creates it empty (ensureConversationFile: writeFileSync with flag
// "wx", chunk-DPEB6S2R.js) and only ever appends to it, so no record of any
// turn reached it: under tailproof's rules a dangling prompt without a
// marker is then interrupted (ADR 0023, 2026-12-01 "An empty transcript").
// When the ledger shows the file held records once (an admission with a
// marker, a settled terminal), they are gone — the file was replaced — and
// the proof holds for no prompt.
func (c *Core) TranscriptEmpty() { c.empty = true }

// TranscriptNeverCreated tells the core, before EndChain over an empty chain,
// that the transcript does not exist and has no archived copy. Qwen Code
// 0.24.4 creates the transcript at its first record's append, synchronously
// before the write is queued (legacy writer: ensureConversationFile, flag
// "wx"; writer lease, serve's default: openTranscriptForAppend, then each
// record fsynced — chunk-DPEB6S2R.js), and never removes it but by the archive
// move; so no record of any turn was appended, or what was appended was lost
// with the crash. The evidence is then the empty transcript's (ADR 0023,
// 2026-12-01 "A transcript never created"), with the same ledger condition.
func (c *Core) TranscriptNeverCreated() { c.empty, c.neverCreated = true, true }

// NeverCreated reports that the transcript was found missing with no
// archived copy (TranscriptNeverCreated).
func (c *Core) NeverCreated() bool { return c.neverCreated }

// EndChain ends the walk of chain (walkErr: the walk's error).
func (c *Core) EndChain(chain *qwen.Chain, walkErr error) {
	if c.acc == nil {
		c.StartChain()
	}
	c.walked, c.chainOK = true, walkErr == nil
	r := c.in.Rules
	foreign := foreignWorkspace(c.in.Workspace, chain)
	for _, cd := range c.cands {
		t := cd.fold.Evidence()
		if !r.Identity {
			t = cd.fold.ReferenceEvidence()
		}
		t.Gaps = len(chain.Gaps)
		for _, bad := range chain.BadLines {
			if errors.Is(bad, events.ErrTornTail) {
				t.TornTail = true
				continue
			}
			if r.StrictChain {
				t.BadLines = append(t.BadLines, bad.Pos.String())
			}
		}
		if d := chain.Degraded(); d != "" && r.StrictChain {
			t.Degraded = d
		}
		switch {
		case walkErr != nil:
			t.Loaded, t.LoadErr = false, walkErr.Error()
		case t.ChainLen == 0 && c.empty && !c.wrote && r.Identity && chain.Records == 0:
			t.Loaded, t.Empty, t.NeverCreated = true, true, c.neverCreated
		case t.ChainLen == 0 && c.neverCreated:
			t.Loaded, t.LoadErr = false, "transcript missing"
		case t.ChainLen == 0:
			t.Loaded, t.LoadErr = false, "no conversation records on the active chain"
		}
		if foreign != "" && t.LoadErr == "" {
			t.Loaded, t.LoadErr = false, foreign
		}
		if o := &t.Ownership; o.Absent && chain.Records != chain.Len {
			// A record off the active chain (a rewind, a branch, a side
			// record) could be the target's own.
			o.Absent, o.AbsenceBlock = false, fmt.Sprintf("%d records are off the active chain", chain.Records-chain.Len)
		}
		if t.NeverStarted && chain.Records != chain.Len {
			t.NeverStarted, t.NeverStartedBlock = false, fmt.Sprintf("%d records are off the active chain", chain.Records-chain.Len)
		}
		cd.ev.Transcript = t
	}
	c.admittedOnOwnRecord()
}

// admittedOnOwnRecord handles two dangling prompts where one (X) was
// admitted with its marker on the other's (T's) own 0.24.4 prompt record:
// the snapshot and calls after that record may be T's turn, with X queued
// behind it, or a retry or continue turn of X, which writes no user record
// (0.24.4, acpAgent ~7075–7125) — the files are the same (simulator, seed 10
// #290485: T blocked by a UserPromptSubmit hook, X a retry). Neither T's call
// identity nor X's absence is then proven (ADR 0032 §5).
func (c *Core) admittedOnOwnRecord() {
	for _, x := range c.cands {
		xt := &x.ev.Transcript
		if xt.MarkerIdx < 0 {
			continue
		}
		for _, tc := range c.cands {
			to := &tc.ev.Transcript.Ownership
			if tc == x || to.TargetIdx != xt.MarkerIdx {
				continue
			}
			why := fmt.Sprintf("prompt %s was admitted on prompt %s's own record: what follows may be %s's retry or continue turn (no user record in 0.24.4) as well as %s's", x.ev.Target, tc.ev.Target, x.ev.Target, tc.ev.Target)
			if to.CallConflict == "" {
				to.CallConflict = why
			}
			if xo := &xt.Ownership; xo.Absent {
				xo.Absent, xo.AbsenceBlock = false, why
			}
			if xt.NeverStarted {
				xt.NeverStarted, xt.NeverStartedBlock = false, why
			}
		}
	}
}

// Target is the prompt the transcript's tail is about, as this
// reconciliation sees it: the only (or, under the reference's rules, the
// first) dangling prompt; with several under tailproof's rules, the tail
// owner; with none, the chain's last identified prompt. Status consults it,
// so it cannot pick a different prompt than Reconcile. Call it after the
// chain.
func (c *Core) Target() string {
	switch {
	case len(c.dangling) == 0:
		return c.lastIdentified
	case c.several:
		id, _ := c.target()
		return id
	}
	return c.dangling[0]
}

// TurnResult is the state of the last system/turn_result naming prompt id
// on the chain ("" when none).
func (c *Core) TurnResult(id string) string { return c.turnResults[id] }

// Fingerprints makes the next StartChain's api-history fold count old ids
// by fingerprints (apihistory.Options.Fingerprints: ~6 bytes an id instead
// of ~60). A caller that turns it on must check WalkExact after the walk
// and, when it is false, turn it off and walk the chain again: the first
// walk's answers are then unproven and the decision must not use them.
func (c *Core) Fingerprints(on bool) { c.fingerprints = on }

// WalkExact reports whether the walk's api-history answers are proven (see
// Fingerprints); always true for a walk without fingerprints or without a
// fold. Call it after the last AddChainEvent, before EndChain.
func (c *Core) WalkExact() bool { return c.acc == nil || c.acc.Exact() }

// History is the API history folded from the walk (zero before it).
func (c *Core) History() apihistory.Result {
	if c.acc == nil {
		return apihistory.Result{}
	}
	return c.acc.Result()
}

// target chooses, among several dangling prompts, the one whose own prompt
// record is the active chain's last identified one — the prompt that was
// running when the daemon died — or, without identities, the last-admitted
// unsettled prompt.
func (c *Core) target() (id string, byIdentity bool) {
	fallback := c.dangling[0]
	if adm, ok := c.view.LatestUnsettledAdmission(); ok && slices.Contains(c.dangling, adm.PromptID) {
		fallback = adm.PromptID
	}
	if !c.chainOK || !slices.Contains(c.dangling, c.lastIdentified) {
		return fallback, false
	}
	return c.lastIdentified, c.lastIdentified != fallback
}

func (c *Core) tracef(format string, args ...any) {
	if c.in.NoTrace {
		return
	}
	c.trace = append(c.trace, fmt.Sprintf(format, args...))
}
