package reconcile

import (
	"fmt"

	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/interruption"
)

// Ready steps every candidate's machine as far as the evidence fed so far
// allows and returns the decisions. Call it after the ledger and, when
// NeedsTranscript, after the chain.
func (c *Core) Ready() Ready {
	if c.readied {
		return c.ready
	}
	c.readied = true
	rd := Ready{LedgerSize: c.size}
	if len(c.dangling) == 0 {
		m := c.newRun(nil)
		m.fire(EvNothing, nil)
		c.trace = append(c.trace, m.trace...)
		rd.Trace = c.trace
		c.ready = rd
		return rd
	}
	cands := c.cands
	if c.several {
		id, byIdentity := c.target()
		if byIdentity {
			c.tracef("several dangling: %s's own prompt record is the transcript's last: the tail is %s's", id, id)
		}
		for _, cd := range c.cands {
			cd.ev.TailOwner = id
			if cd.ev.Target == id && c.in.Rules.Dangling == TailOwner {
				cands = []*candidate{cd}
			}
		}
	}
	var hist *apihistory.Result
	for _, cd := range cands {
		c.step(cd, &hist)
		if proven(cd.d.State) {
			rd.NeedFence = true
		}
	}
	c.cands = cands
	rd.Decisions = c.decisions()
	rd.Trace = c.trace
	c.ready = rd
	return rd
}

// Commit fires the commit step of every proven decision against the ledger
// size measured just before appending (err: the measurement failed) and
// returns the final decisions: Appended is set, in admission order, on each
// that may be appended.
func (c *Core) Commit(size int64, err error) Ready {
	rd := c.Ready()
	for _, cd := range c.cands {
		s := cd.d.State
		if !proven(s) {
			continue
		}
		cd.ev.RefetchSize = size
		if err != nil {
			cd.ev.RefetchErr = err.Error()
		}
		m := c.resume(cd)
		if !m.fire(EvCommit, cd.ev) {
			c.finish(cd, m, VerdictUnknown)
			continue
		}
		rec := ledger.Terminal(cd.ev.Target, ledger.Completed, "", ledger.StopReconstructed, 0)
		v := VerdictCompleted
		switch s {
		case ProvenInterrupted:
			rec = ledger.Terminal(cd.ev.Target, ledger.Interrupted, ledger.CodeDaemonLost, "", 0)
			v = VerdictInterrupted
		case ProvenSettled:
			rec, v = settledTerminal(cd.ev)
		}
		c.finish(cd, m, v)
		cd.d.Appended = &rec
	}
	rd.NeedFence = false
	rd.Decisions = c.decisions()
	c.ready = rd
	return rd
}

func (c *Core) decisions() []Decision {
	out := make([]Decision, len(c.cands))
	for i, cd := range c.cands {
		out[i] = cd.d
	}
	return out
}

// step runs one candidate from loaded to a proven verdict or unknown.
func (c *Core) step(cd *candidate, hist **apihistory.Result) {
	ev := cd.ev
	m := c.newRun(cd)
	if c.several {
		m.tracef("decide %s:", ev.Target)
	}
	if !m.fire(EvSelect, ev) {
		c.finish(cd, m, VerdictUnknown)
		return
	}
	if ev.HasAdmission && !c.in.NoTrace {
		m.tracef("fold ledger: latest unsettled admission %s", ev.Admission.Describe())
	}
	if !m.fire(EvAttribute, ev) {
		c.finish(cd, m, VerdictUnknown)
		return
	}
	t := ev.Transcript
	if !c.walked {
		// The ledger alone refused every candidate, or the caller skipped the
		// transcript: nothing after attribution can be proven.
		m.tracef("fold transcript: not read")
		ev.Transcript.LoadErr = "transcript not read"
		ev.Transcript.MarkerIdx, ev.Transcript.Ownership.TargetIdx, ev.Transcript.Ownership.TurnEndIdx = -1, -1, -1
	} else if c.in.NoTrace {
		// Nothing below but the transcript fold's trace lines.
	} else if c.unavailable {
		m.tracef("fold transcript: %s", t.LoadErr)
	} else {
		m.tracef("fold transcript: chain %d records, %d gaps, marker %s, last visible %s@%d, after admission %d (visible %d, non-system %d)",
			t.ChainLen, t.Gaps, markerText(t), orDash(t.LastVisibleType), t.LastVisibleMs, t.AfterAdmission, t.VisibleAfter, t.NonSystemAfter)
		if o := t.Ownership; o.Active {
			m.tracef("fold transcript: ownership target record #%d, followed by %q, turn_result %q", o.TargetIdx, o.FollowedBy, o.TurnResult)
		}
		if o := t.Ownership; o.Active && o.TargetIdx < 0 {
			m.tracef("fold transcript: own record absent: %s", orDash(o.AbsenceBlock))
		}
		if t.NotDispatched && !t.Ownership.Active {
			m.tracef("fold transcript: no user-role record after the marker; never started: %s", neverStarted(t.NeverStartedBlock))
		}
		if o := t.Ownership; o.CallIdentity {
			end := "runs to the chain's end"
			if o.TurnEndIdx >= 0 {
				end = fmt.Sprintf("ended at #%d by %s", o.TurnEndIdx, o.TurnEnd)
			}
			m.tracef("fold transcript: call identity: turn %s %s", orDash(o.TurnID), end)
		}
	}
	if !m.fire(EvCheck, ev) {
		c.finish(cd, m, VerdictUnknown)
		return
	}
	route := c.classify(cd, m, hist)
	if !m.fire(route, ev) {
		c.finish(cd, m, VerdictUnknown)
		return
	}
	cd.d.Route = route
	c.finish(cd, m, VerdictUnknown) // proven, not yet committed
}

// classify picks the route that proves the candidate's verdict, in order:
// its own turn_result (completed, or settled otherwise), the proven absence
// of its own record, its own turn's branch_checkpoint, a local slash command, a turn never dispatched, and
// otherwise the transcript's tail.
func (c *Core) classify(cd *candidate, m *run, hist **apihistory.Result) Event {
	ev, r := cd.ev, c.in.Rules
	t := ev.Transcript
	if t.Ownership.TurnResult == "completed" {
		ev.Classification = guards.Classification{Done: true, Kind: "none", FromTurnResult: true}
		m.tracef("classify: the transcript's turn_result for %s says completed", ev.Target)
		return EvOwnTurnResult
	}
	if o := t.Ownership; r.Identity && o.TurnResult != "" {
		// The prompt's own turn settled otherwise (cancelled, error, or a
		// state this reader does not know): the settled-turn guard allows
		// only the outcomes whose ledger terminal is exactly known.
		ev.Classification = guards.Classification{Done: true, Kind: "settled", FromTurnResult: true, FromSettledTurn: true}
		m.tracef("classify: the transcript's turn_result for %s says %s", ev.Target, describeSettled(o))
		return EvOwnSettledTurn
	}
	if r.Identity && t.Empty {
		// The transcript was created empty and never appended to: no turn
		// of any prompt wrote a record (TranscriptEmpty).
		ev.Classification = guards.Classification{Done: true, Kind: "not_started", Interrupted: true, FromAbsence: true}
		if t.NeverCreated {
			m.tracef("classify: the transcript was never created (missing, no archived copy): %s's turn wrote nothing", ev.Target)
		} else {
			m.tracef("classify: the transcript exists, holds no record and has no archived copy: %s's turn wrote nothing", ev.Target)
		}
		return EvOwnRecordAbsent
	}
	if o := t.Ownership; r.Identity && o.Active && o.TargetIdx < 0 && o.Absent {
		// The writer stamps identities and the chain after the marker holds
		// every turn since, none of them the target's: it never started.
		// Before every route that reads what follows the marker (a local
		// command, the tail): all of it is other turns'.
		ev.Classification = guards.Classification{Done: true, Kind: "not_started", Interrupted: true, FromAbsence: true}
		if t.MarkerUUID == "" {
			m.tracef("classify: %s's own record is provably absent from the whole chain (its admission carries no marker): its turn never started", ev.Target)
		} else {
			m.tracef("classify: %s's own record is provably absent after its marker %s: its turn never started", ev.Target, t.MarkerUUID)
		}
		return EvOwnRecordAbsent
	}
	if o := t.Ownership; r.Identity && o.TargetIdx >= 0 && o.Checkpoint != "" {
		// The target's own turn wrote its branch_checkpoint, which 0.24.4
		// writes only when #executePrompt returned end_turn: the bridge's
		// terminal for it is completed. Before every route that reads a
		// tail: later turns may follow it.
		ev.Classification = guards.Classification{Done: true, Kind: "none", FromCheckpoint: true}
		m.tracef("classify: %s's own turn wrote branch_checkpoint %s (0.24.4 writes one only for a turn that returned end_turn): completed", ev.Target, o.Checkpoint)
		return EvOwnCheckpoint
	}
	if r.LocalCommandRoute && t.LocalCommandDone && t.AfterLocalCommand == 0 {
		// The target's turn was a local slash command, answered after its
		// admission with nothing visible after it: whatever the tail shows
		// once the command is popped belongs to an earlier turn.
		ev.Classification = guards.Classification{Done: true, Kind: "none", FromLocalCommand: true}
		m.tracef("classify: a local slash command answered %s after its admission", ev.Target)
		return EvLocalCommand
	}
	if r.NotDispatchedRoute && t.NotDispatched && !t.Ownership.Active {
		// No prompt record after the target's marker: its turn never started
		// (or what it wrote was lost with the tail). The tail is another
		// turn's — a background turn, a predecessor still streaming, a
		// deadline-released agent — and says nothing about the target.
		ev.Classification = guards.Classification{Done: true, Kind: "not_started", Interrupted: true, FromNotDispatched: true}
		m.tracef("classify: no prompt record after %s's admission marker %s: its turn never started", ev.Target, t.MarkerUUID)
		return EvNotDispatched
	}
	if *hist == nil {
		res := apihistory.Result{}
		if c.acc != nil {
			res = c.acc.Result()
		}
		*hist = &res
	}
	own := **hist
	if cd.hist != nil && t.Ownership.TurnEndIdx >= 0 {
		// Call identity bounds the target's turn: its tail is the history
		// as it stood before another turn's first record.
		own = *cd.hist
	}
	// The one tail classifier: Status computes the same tail through the
	// same function (interruption.ClassifyTail).
	tc := interruption.ClassifyTail(own, r.Trim)
	tail, v, upgrade := tc.Tail, tc.Verdict, tc.IdlessUpgrade
	ev.Classification = guards.Classification{
		Done: true, Kind: v.Kind.String(), IdlessUpgrade: upgrade,
		Interrupted: v.Kind != interruption.KindNone || upgrade, Guessed: tail.Guessed,
	}
	byShape, upgraded := "", ""
	if tail.Guessed {
		byShape = ", by shape"
	}
	if upgrade {
		upgraded = ", upgraded: tail holds a functionCall"
	}
	m.tracef("classify: %s over %d tail entries (trimmed %d notifications%s)%s", v.Kind, len(tail.Entries), tail.Trimmed, byShape, upgraded)
	if ev.Classification.Interrupted {
		return EvTailInterrupted
	}
	return EvTailComplete
}

func neverStarted(block string) string {
	if block == "" {
		return "proven"
	}
	return "not proven: " + block
}

// runSteps is the room a run's steps start with: a decision takes a handful
// of steps, and growing the slice from empty was a visible share of the
// simulator's allocations.
const runSteps = 4

// run steps one candidate's machine along Table, recording steps and trace.
type run struct {
	c     *Core
	state State
	steps []machines.Step
	trace []string
}

func (c *Core) newRun(cd *candidate) *run {
	if cd == nil {
		return &run{c: c, state: Loaded, steps: make([]machines.Step, 0, runSteps)}
	}
	steps := cd.d.Steps
	if steps == nil {
		steps = make([]machines.Step, 0, runSteps)
	}
	return &run{c: c, state: cd.d.State, steps: steps, trace: cd.d.Trace}
}

func (c *Core) resume(cd *candidate) *run { return c.newRun(cd) }

func (m *run) tracef(format string, args ...any) {
	if m.c.in.NoTrace {
		return
	}
	m.trace = append(m.trace, fmt.Sprintf(format, args...))
}

// fire runs one guarded step; on a veto it moves the machine to unknown.
func (m *run) fire(event Event, ev *guards.Evidence) bool {
	dst, ok := next(m.state, event)
	if !ok {
		m.tracef("machine error: %v", fmt.Errorf("reconcile: event %q from state %q: %w", event, m.state, machines.ErrIllegal))
		m.giveUp()
		return false
	}
	s := machines.Step{Event: string(event), Src: string(m.state), Dst: string(dst)}
	if g := m.c.in.Rules.Guards.For(event); g != nil && ev != nil {
		s.Vetoes = g.Check(ev)
	}
	m.steps = append(m.steps, s)
	if !m.c.in.NoTrace {
		m.trace = append(m.trace, "machine "+s.Describe())
	}
	if len(s.Vetoes) > 0 {
		m.giveUp()
		return false
	}
	m.state = dst
	return true
}

func (m *run) giveUp() {
	dst, ok := next(m.state, EvGiveUp)
	if !ok {
		return
	}
	s := machines.Step{Event: string(EvGiveUp), Src: string(m.state), Dst: string(dst)}
	m.steps = append(m.steps, s)
	if !m.c.in.NoTrace {
		m.trace = append(m.trace, "machine "+s.Describe())
	}
	m.state = dst
}

func (c *Core) finish(cd *candidate, m *run, v Verdict) {
	steps := m.steps
	if len(steps) == 0 {
		steps = nil // as before the room was made: no steps, no slice
	}
	cd.d.State, cd.d.Steps, cd.d.Trace, cd.d.Verdict = m.state, steps, m.trace, v
	cd.d.Vetoes = cd.d.Vetoes[:0:0]
	for _, s := range m.steps {
		cd.d.Vetoes = append(cd.d.Vetoes, s.Vetoes...)
	}
	if len(cd.d.Vetoes) == 0 {
		cd.d.Vetoes = nil
	}
}
