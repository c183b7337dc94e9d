package turnfold

import (
	"hash/fnv"
	"strconv"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// Fold folds a session's acts, in file order, into turns. Add returns the
// turn an act closed (a new turn opened after it); Finish returns the last
// one. Memory is one turn's evidence plus 8 bytes per record uuid seen (the
// parent-link check needs every earlier uuid).
type Fold struct {
	cur      *Turn
	index    int
	preamble []Prompt // non-triggering prompts while no turn is open

	// recent holds the ids of closed turns, so a late or duplicated end
	// record for one of them is recognised rather than taken for a foreign
	// one. Bounded: Codex's own lifecycle tracker keeps every id; a late end
	// for a turn this many turns back is reported as foreign (fail closed).
	recent []string

	// pendingMark is a turn mark that named another turn than the open
	// one (or came while none was open): the next turn opened by progress
	// takes it.
	pendingMark   string
	pendingParent string // the pending mark's record's parent link
	// closedMarks are the marks of closed turns (bounded like recent).
	closedMarks []string

	seen       map[uint64]struct{}
	lastParent string // parent already checked for the current record

	hasSeq     bool
	lastSeq    int64
	lastSeqPos events.Position

	// Problems found while no turn was open: the next turn's span holds
	// them (a lost line between turns may have been its start or prompt).
	gapDamage []events.Position
	gapTorn   *events.Position
	gapSeq    []string
	gapChain  []string
}

const recentTurns = 64

// New returns an empty fold.
func New() *Fold { return &Fold{seen: map[uint64]struct{}{}} }

// Add folds one act. It returns the turn that act closed, or nil.
func (f *Fold) Add(a turn.Act) *Turn {
	if a.Side {
		// Another stream's record (a sidechain): its uuid may be named by
		// its own children, never by the main conversation's turns.
		f.remember(a.UUID)
		return nil
	}
	seqMsg := f.checkSeq(a)
	chainMsg := f.checkParent(a)
	var closed *Turn
	switch a.Kind {
	case turn.KindTurnStart:
		if t := f.cur; t != nil && !t.HasEnd && !t.Explicit && t.LastProgress == turn.KindPrompt && t.Outputs == 0 && len(t.Calls) == 0 {
			// Input recorded just before the start that opens its turn: the
			// start adopts it rather than leaving a turn of prompts alone
			// (which would be decided interrupted and lose its prompts
			// from the real turn's resume plan).
			t.Explicit, t.ID, t.Last = true, a.Turn, a.Pos
			break
		}
		closed = f.open(a, true)
	case turn.KindPrompt:
		closed = f.prompt(a)
	case turn.KindOutput, turn.KindReasoning, turn.KindToolCall, turn.KindToolResult, turn.KindToolRan:
		if f.cur == nil || f.cur.HasEnd {
			m, mp := f.pendingMark, f.pendingParent
			closed = f.open(a, false)
			if m != "" {
				f.cur.Mark, f.cur.StartParent = m, mp
			}
		}
		f.progress(a)
	case turn.KindTurnEnd:
		closed = f.end(a)
	case turn.KindInterrupt:
		if f.cur != nil {
			f.cur.Interrupts = append(f.cur.Interrupts, Interrupt{Pos: a.Pos, Reason: a.Reason})
			f.cur.Last = a.Pos
		}
	case turn.KindError:
		if f.cur != nil {
			f.cur.TrailingError, f.cur.TrailingRetry, f.cur.ErrorReason = true, a.Retry, a.Reason
			f.cur.Last = a.Pos
		}
	case turn.KindCompaction:
		if f.cur != nil {
			f.cur.Compactions++
		}
	case turn.KindRollback:
		if f.cur != nil {
			what := strconv.FormatInt(a.N, 10) + " turn(s) rolled back"
			if a.N == 0 {
				what = "history rolled back (" + a.Reason + ")"
			}
			f.cur.Notes = append(f.cur.Notes, "line "+strconv.Itoa(a.Pos.Line)+": "+what)
		}
	case turn.KindUnknown:
		if f.cur != nil {
			f.cur.Notes = append(f.cur.Notes, "line "+strconv.Itoa(a.Pos.Line)+": record kind "+string(a.Native)+" not modeled")
		}
	case turn.KindDamage:
		f.damage(a)
	case turn.KindTurnMark:
		closed = f.mark(a)
	}
	f.remember(a.UUID)
	if seqMsg != "" || chainMsg != "" {
		f.attach(a, seqMsg, chainMsg)
	}
	return closed
}

// attach charges a sequence or chain problem of act a to the turn whose span
// holds a, or to the gap before the next turn.
func (f *Fold) attach(a turn.Act, seqMsg, chainMsg string) {
	add := func(dst *[]string, msg string) {
		if msg != "" {
			*dst = append(*dst, msg)
		}
	}
	if t := f.cur; t != nil && (!t.HasEnd || t.Last == a.Pos) {
		add(&t.SeqProblems, seqMsg)
		add(&t.ChainBreaks, chainMsg)
		return
	}
	add(&f.gapSeq, seqMsg)
	add(&f.gapChain, chainMsg)
}

// Finish returns the last turn (nil when the file held none). Damage after
// its end that no later turn claimed is recorded on it.
func (f *Fold) Finish() *Turn {
	t := f.cur
	f.cur = nil
	if t == nil {
		return nil
	}
	t.DamageAfter = append(t.DamageAfter, f.gapDamage...)
	if f.gapTorn != nil {
		t.Torn = f.gapTorn
		t.Notes = append(t.Notes, "a torn final fragment after the turn's end was discarded: it may have been the next prompt")
	}
	for _, m := range append(f.gapSeq, f.gapChain...) {
		t.Notes = append(t.Notes, "after the turn's end: "+m)
	}
	f.gapDamage, f.gapTorn, f.gapSeq, f.gapChain = nil, nil, nil, nil
	return t
}

func (f *Fold) open(a turn.Act, explicit bool) *Turn {
	closed := f.cur
	if closed != nil {
		f.closing(closed)
		if f.gapTorn != nil {
			// A torn line followed by valid records is corruption, which
			// events.Decode reports as such; a torn tail is always last.
			f.gapTorn = nil
		}
	}
	f.index++
	t := &Turn{Index: f.index, Explicit: explicit, Start: a.Pos, Last: a.Pos, StartParent: a.Parent}
	if explicit {
		t.ID = a.Turn
	}
	t.DamageBefore, f.gapDamage = f.gapDamage, nil
	t.SeqProblems, f.gapSeq = f.gapSeq, nil
	t.ChainBreaks, f.gapChain = f.gapChain, nil
	t.Prompts, f.preamble = f.preamble, nil
	// A pending mark names the turn a progress act opens (the caller sets
	// it); a start or a prompt names its own turn, and its own marks follow.
	f.pendingMark = ""
	f.cur = t
	return closed
}

// triggers reports whether a prompt of source s starts a model turn of its
// own when none is open. Meta records, commands and their output, injected
// context and summaries are written around a turn, not as one.
func triggers(s turn.Source) bool {
	switch s {
	case turn.SourceUser, turn.SourceNotification, turn.SourceScheduler, turn.SourceAgent, turn.SourceUnknown:
		return true
	}
	return false
}

func (f *Fold) prompt(a turn.Act) *Turn {
	p := Prompt{Source: a.Source, Origin: a.Origin, Text: a.Text, Pos: a.Pos, ID: a.Prompt, UUID: a.UUID}
	var closed *Turn
	switch {
	case f.cur != nil && !f.cur.HasEnd && f.cur.Explicit:
		// Input inside an explicitly opened turn belongs to it (the turn's
		// own prompt, or input steered into the running turn).
	case f.cur != nil && !f.cur.HasEnd && (a.Source != turn.SourceUser || a.Steer):
		// Delivered into the open turn (a notification at a tool boundary,
		// a person's message queued while the turn ran).
	case triggers(a.Source):
		closed = f.open(a, false)
		f.cur.Initiator = a.Source
	default:
		f.preamble = append(f.preamble, p)
		return nil
	}
	t := f.cur
	if !t.Explicit && t.ID == "" {
		switch {
		case a.Turn != "":
			t.ID = a.Turn
		case a.Prompt != "":
			t.ID = a.Prompt
		case a.UUID != "":
			t.ID = a.UUID
		}
	}
	t.Prompts = append(t.Prompts, p)
	mayBeOver := t.LastProgress == turn.KindOutput && (t.LastStop == turn.StopFinal || t.LastStop == turn.StopUnclear) ||
		t.LastProgress == turn.KindToolResult && t.EndsAfterCalls && len(t.Dangling()) == 0
	if a.Source != turn.SourceUser && mayBeOver {
		// Input the harness put where the turn's work may have ended — after
		// a complete model message that may be its answer, or the answered
		// batch the harness ends the turn after (a notification, injected
		// context) — may open the next turn as well as extend this one: it
		// is not proof that this turn's work went on, so what came before
		// stays the last progress.
		t.Last = a.Pos
		t.Notes = append(t.Notes, "line "+strconv.Itoa(a.Pos.Line)+": "+a.Source.String()+" input where the turn's work may have ended: it may open the next turn")
		return closed
	}
	f.progress(a)
	return closed
}

func (f *Fold) progress(a turn.Act) {
	t := f.cur
	t.Last, t.LastProgressPos = a.Pos, a.Pos
	t.LastProgress = a.Kind
	t.TrailingError, t.TrailingRetry, t.ErrorReason = false, false, ""
	switch a.Kind {
	case turn.KindPrompt:
		t.LastStop = a.Stop
	case turn.KindOutput, turn.KindReasoning:
		t.Outputs++
		t.LastStop = a.Stop
	case turn.KindToolCall:
		t.Calls = append(t.Calls, Call{ID: a.Call, Name: a.Name, Pos: a.Pos})
	case turn.KindToolResult, turn.KindToolRan:
		i := t.call(a.Call, a.Kind == turn.KindToolResult)
		if i < 0 {
			t.Notes = append(t.Notes, "line "+strconv.Itoa(a.Pos.Line)+": "+a.Kind.String()+" for call "+strconv.Quote(a.Call)+" that this turn never made")
			return
		}
		if a.Kind == turn.KindToolRan {
			t.Calls[i].Ran = true
		} else {
			t.Calls[i].Result, t.Calls[i].Failed = true, a.Failed
			if a.Stop == turn.StopFinal {
				t.EndsAfterCalls = true
			}
		}
	}
}

// call finds call id. A result answers the earliest call of that id still
// without one (calls without ids, or ids reused, are answered in order); a
// proof that a call ran names the latest.
func (t *Turn) call(id string, result bool) int {
	if result {
		for i := range t.Calls {
			if t.Calls[i].ID == id && !t.Calls[i].Result {
				return i
			}
		}
	}
	for i := len(t.Calls) - 1; i >= 0; i-- {
		if t.Calls[i].ID == id {
			return i
		}
	}
	return -1
}

func (f *Fold) end(a turn.Act) *Turn {
	t := f.cur
	if a.Turn != "" && (t == nil || t.ID != "" && a.Turn != t.ID) {
		for _, id := range f.recent {
			if id == a.Turn {
				if t != nil {
					t.Notes = append(t.Notes, "line "+strconv.Itoa(a.Pos.Line)+": a late end record for earlier turn "+a.Turn+" (ignored)")
				}
				return nil
			}
		}
		if t == nil || t.HasEnd {
			// The end of a turn that left no other record (a Qwen prompt
			// that failed, or had nothing to do, before its first write):
			// a turn of its own, not a second end of the one before.
			closed := f.open(a, false)
			f.cur.ID = a.Turn
			f.cur.HasEnd, f.cur.End, f.cur.EndReason, f.cur.EndPos = true, a.End, a.Reason, a.Pos
			return closed
		}
		t.ForeignEnd = a.Turn
		return nil
	}
	if t == nil {
		return nil
	}
	if a.HasSince && a.Since != t.StartParent {
		// The end says its turn began after another record than this
		// turn's first: it closes a turn that began inside this one's
		// span (a Qwen retry turn after a restart, behind a prompt that
		// wrote only its own record).
		t.ForeignEnd = "the turn begun after " + strconv.Quote(a.Since)
		return nil
	}
	if t.HasEnd && t.End != turn.EndUnstated && a.End == turn.EndUnstated {
		// An unstated end after a stating one (Claude Code's turn_duration
		// after the Stop hooks' summary) says the turn ended, which the
		// first already said, and how: it adds nothing but its line.
		t.Last = a.Pos
		return nil
	}
	if t.HasEnd && !(t.End == turn.EndUnstated && a.End != turn.EndUnstated) {
		// A stating end after an unstated one (Qwen's branch_checkpoint,
		// then its turn_result) is the harness saying how; anything else
		// twice is worth a note.
		t.Notes = append(t.Notes, "line "+strconv.Itoa(a.Pos.Line)+": a second end record ("+a.End.String()+")")
	}
	if t.ID == "" && a.Turn != "" {
		// The end names the turn it closes when nothing before it did
		// (a Qwen retry turn: no user record, its turn_result names it).
		t.ID = a.Turn
	}
	t.HasEnd, t.End, t.EndReason, t.EndPos, t.Last = true, a.End, a.Reason, a.Pos, a.Pos
	return nil
}

func (f *Fold) damage(a turn.Act) {
	// Only a final fragment without its newline was never written whole; a
	// whole line at the end that does not decode (two records spliced by
	// concurrent writers, Claude Code #81843) may have held the turn's end.
	torn := a.Torn
	switch {
	case torn && f.cur != nil && !f.cur.HasEnd:
		p := a.Pos
		f.cur.Torn = &p
	case torn:
		p := a.Pos
		f.gapTorn = &p
	case f.cur != nil && !f.cur.HasEnd:
		f.cur.Damage = append(f.cur.Damage, a.Pos)
	default:
		// Between turns the lost line may have opened the next turn or
		// carried its prompt: the next turn answers for it.
		f.gapDamage = append(f.gapDamage, a.Pos)
	}
}

func (f *Fold) checkSeq(a turn.Act) string {
	if a.Kind == turn.KindDamage {
		return ""
	}
	if f.hasSeq && a.Pos == f.lastSeqPos {
		return "" // another act of the same record
	}
	var msg string
	switch {
	case !a.HasSeq && f.hasSeq:
		return "line " + strconv.Itoa(a.Pos.Line) + ": a record without a sequence number after numbered ones"
	case !a.HasSeq:
		return ""
	case f.hasSeq && a.Seq != f.lastSeq+1:
		msg = "line " + strconv.Itoa(a.Pos.Line) + ": sequence number " + strconv.FormatInt(a.Seq, 10) + " after " + strconv.FormatInt(f.lastSeq, 10)
	}
	f.hasSeq, f.lastSeq, f.lastSeqPos = true, a.Seq, a.Pos
	return msg
}

func (f *Fold) checkParent(a turn.Act) string {
	if a.Parent == "" || a.Kind == turn.KindDamage || a.Parent == f.lastParent {
		return ""
	}
	f.lastParent = a.Parent
	if _, ok := f.seen[hash(a.Parent)]; ok {
		return ""
	}
	return "line " + strconv.Itoa(a.Pos.Line) + ": parent " + a.Parent + " is no earlier record"
}

func (f *Fold) remember(uuid string) {
	if uuid != "" {
		f.seen[hash(uuid)] = struct{}{}
	}
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
