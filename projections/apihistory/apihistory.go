package apihistory

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// DefaultKeep is how many history entries before the trailing notification
// run the bounded fold keeps exact: the reference's
// TURN_INTERRUPTION_HISTORY_TAIL_COUNT, the widest window any classifier
// reads.
const DefaultKeep = 50

// ErrNotTranscript is returned by Add for an event whose body is not a Qwen
// transcript record: the projection has no meaning for it, and silently
// skipping it could hide a wiring mistake that changes a verdict.
var ErrNotTranscript = errors.New("not a qwen transcript record")

// Options configure a Fold.
type Options struct {
	// StripThoughts is the reference's stripThoughtsFromHistory: thought
	// parts are dropped and entries left with no parts disappear.
	StripThoughts bool
	// Keep is how many entries before the trailing notification run stay
	// exact; 0 means DefaultKeep. Ignored when Unbounded.
	Keep int
	// Unbounded keeps every entry (tests, small inputs, tools that print the
	// whole history).
	Unbounded bool
	// Fingerprints counts the ids of all but the most recent few thousand
	// by 32-bit fingerprint words (about 6 bytes an id and kind instead of
	// ~60): the
	// fold then reports through Exact whether its answers are proven, and
	// a caller that sets it must walk again without it when they are not.
	// Ignored with StripThoughts.
	Fingerprints bool
}

// Result is the projection after the records added so far.
type Result struct {
	// Tail is the end of the api history, oldest first:
	// entries Total-len(Tail) … Total-1. It always holds the whole trailing
	// run of notification-shaped entries and at least Keep entries before
	// that run (fewer only when the history is shorter).
	Tail []Entry
	// Total is the length of the full api history.
	Total int
	// CompletedToolCallIDs is the reference's completedToolCallIds after its
	// final uniqueness filter, in insertion order; nil when none.
	CompletedToolCallIDs []string
	// TrailingSystemNotifications counts the trailing entries whose
	// ColdNotification flag is set (always present; 0 is information).
	TrailingSystemNotifications int
	// CancelledLastTurn is the reference's isLastApiPromptCancelled.
	CancelledLastTurn bool
	// Records is how many records were added.
	Records int
}

// Start is the full-history index of Tail[0].
func (r Result) Start() int { return r.Total - len(r.Tail) }

// Fold is the incremental SessionApiHistoryAccumulator. Add every record of
// the active chain in order; Result may be called at any point and does not
// disturb the fold.
type Fold struct {
	opts Options
	keep int

	win        []slot // the retained end of the history, oldest first
	base       []slot // win's backing array from its first element
	off        int    // win == base[off:]
	keptInWin  int    // entries of win that survive StripThoughts
	evictedLen int    // kept entries evicted from the front
	// evictedPrompt is the last evicted entry that getLastApiHistoryPromptId
	// would accept, so the last-prompt search never needs evicted bodies.
	evictedPromptFound bool
	evictedPromptID    string

	shapeRun int // trailing kept entries that are notification-shaped
	flagRun  int // trailing kept entries flagged cold

	ids       map[idKey]idCount // functionCall / functionResponse ids in the whole history
	idsShown  map[idKey]idCount // the same, without thought parts (StripThoughts only)
	completed map[string]int    // completedToolCallIds → insertion sequence
	seq       int
	tags      map[idKey]int32 // promptId tag → kept entries carrying it

	lastMaterial *qwen.Record

	// settlement hints over every record (isLastApiPromptCancelled)
	records  int
	prompts  map[idKey]promptHint
	attempt  attemptHint
	daemons  map[idKey]int32 // non-result hints per daemonPromptId
	outcomes map[idKey]resultHint

	fp      *fpCounts // fingerprint mode: replaces ids, tags and the hint maps
	inexact bool      // fingerprint mode gave an answer it could not prove
}

// New returns an empty fold.
func New(opts Options) *Fold {
	k := opts.Keep
	if k <= 0 {
		k = DefaultKeep
	}
	f := &Fold{opts: opts, keep: k}
	// Fingerprint mode never writes the exact counts' maps (it reads them
	// only through fp), and completed is made at its first id: seven empty
	// maps were most of a short session's fold allocations.
	if opts.Fingerprints && !opts.StripThoughts {
		f.fp = newFPCounts(nil, 0)
		return f
	}
	f.ids = map[idKey]idCount{}
	f.idsShown = map[idKey]idCount{}
	f.tags = map[idKey]int32{}
	f.prompts = map[idKey]promptHint{}
	f.daemons = map[idKey]int32{}
	f.outcomes = map[idKey]resultHint{}
	return f
}

// Build folds a whole record sequence without a bound and returns the full
// history in Result.Tail.
func Build(evs []events.Event, opts Options) (Result, error) {
	opts.Unbounded = true
	f := New(opts)
	for _, ev := range evs {
		if err := f.Add(ev); err != nil {
			return Result{}, err
		}
	}
	return f.Result(), nil
}

// Add folds one active-chain record, in chain order. Entries share the
// record's parts array (never writing to it), so a record must not be
// modified after it is added.
func (f *Fold) Add(ev events.Event) error {
	rec, ok := ev.Body.(*qwen.Record)
	if !ok || rec == nil {
		return fmt.Errorf("apihistory: %s: %w (body %T)", ev.Pos, ErrNotTranscript, ev.Body)
	}
	f.hint(rec)
	f.records++

	if rec.Type == qwen.TypeToolResult && rec.Subtype == qwen.SubtypeCodeModeToolResult {
		return nil // internal calls have no model-emitted call partner
	}
	if rec.Type == qwen.TypeSystem {
		switch {
		case rec.Subtype == qwen.SubtypeSlashCommand:
			f.slashCommand(rec)
		case rec.Subtype == qwen.SubtypeGoalTurnEnd:
			f.goalTurnEnd(rec)
		case rec.Subtype == qwen.SubtypeChatCompression && rec.Compression != nil && rec.Compression.HasHistory:
			f.compress(rec, ev)
		}
		return nil
	}
	if rec.Message == nil || rec.Subtype == qwen.SubtypeRealtimeMessage {
		return nil
	}
	for _, p := range rec.Message.Parts {
		if (p.Kind == qwen.PartFunctionCall || p.Kind == qwen.PartFunctionResponse) && p.HasID && p.ID != "" {
			delete(f.completed, p.ID)
		}
	}
	src := sourceOf(rec, ev)
	if rec.Subtype == qwen.SubtypeMidTurnUserMessage && len(f.win) > 0 {
		last := &f.win[len(f.win)-1]
		if last.Content.Role == "user" && !f.holdsCompletedResponse(last.Content) {
			f.merge(rec, src)
			f.lastMaterial = rec
			return nil
		}
	}
	e := Entry{
		// Clipped, not copied: entries never write into a parts array (a merge
		// appends to a clipped slice), so sharing the record's is safe.
		Content:          qwen.Content{Role: rec.Message.Role, Parts: slices.Clip(rec.Message.Parts)},
		ColdNotification: rec.Provenance == "system" && rec.Subtype == qwen.SubtypeNotification && !rec.HasBackground && !rec.DeliveredTurn,
	}
	if rec.Type == qwen.TypeUser && rec.Subtype == "" && rec.PromptID != "" {
		e.PromptID = rec.PromptID
	}
	f.push(e, src)
	f.evict()
	f.lastMaterial = rec
	return nil
}

func sourceOf(rec *qwen.Record, ev events.Event) Source {
	return Source{
		UUID:           rec.UUID,
		Pos:            ev.Pos,
		Type:           rec.Type,
		Subtype:        rec.Subtype,
		Provenance:     ev.Provenance,
		Origin:         ev.Origin,
		DeliveredTurn:  rec.DeliveredTurn,
		BackgroundTurn: rec.HasBackground,
	}
}

func (f *Fold) holdsCompletedResponse(c qwen.Content) bool {
	for _, p := range c.Parts {
		if p.Kind == qwen.PartFunctionResponse && p.HasID {
			if _, ok := f.completed[p.ID]; ok {
				return true
			}
		}
	}
	return false
}

// slashCommand pops a locally answered command's user entry and, for any
// slash command after a user record, fences that record off from a later pop.
func (f *Fold) slashCommand(rec *qwen.Record) {
	prev := f.lastMaterial
	if sc := rec.SlashCommand; sc != nil && prev != nil &&
		sc.Phase == "result" && !sc.SentToModel && sc.HasOutputItems && sc.OutputItemsLength > 0 &&
		allAssistant(sc.OutputItemTypes) &&
		prev.Type == qwen.TypeUser && !prev.HasSubtype &&
		prev.Message != nil && prev.Message.Role == "user" && len(prev.Message.Parts) == 1 &&
		onlyText(prev.Message.Parts[0]) && prev.Message.Parts[0].Text == sc.RawCommand &&
		len(f.win) > 0 {
		f.pop()
	}
	if prev != nil && prev.Type == qwen.TypeUser {
		f.lastMaterial = nil
	}
}

func allAssistant(types []string) bool {
	for _, t := range types {
		if t != "assistant" {
			return false
		}
	}
	return true
}

// goalTurnEnd marks a goal tool call completed when the record directly after
// its unique result is the matching goal_turn_end.
func (f *Fold) goalTurnEnd(rec *qwen.Record) {
	prev := f.lastMaterial
	permit := rec.GoalContext
	if prev == nil || prev.Type != qwen.TypeToolResult || permit == nil || rec.GoalTurnEnd == nil ||
		permit.GoalID == "" || permit.TurnID == "" || prev.GoalContext == nil || prev.Message == nil {
		return
	}
	rev, ok := jsonInteger(permit.Revision)
	if !ok {
		return
	}
	prevRev, ok := jsonNumber(prev.GoalContext.Revision)
	if !ok || prevRev != rev || prev.GoalContext.GoalID != permit.GoalID || prev.GoalContext.TurnID != permit.TurnID {
		return
	}
	id := rec.GoalTurnEnd.ToolCallID
	if id == "" {
		return
	}
	found := false
	for _, p := range prev.Message.Parts {
		if p.Kind == qwen.PartFunctionResponse && p.HasID && p.ID == id {
			found = true
			break
		}
	}
	if found && f.unique(id) {
		if _, ok := f.completed[id]; !ok {
			f.complete(id)
		}
	}
}

// complete records id as a completed tool call, in completion order.
func (f *Fold) complete(id string) {
	if f.completed == nil {
		f.completed = map[string]int{}
	}
	f.seq++
	f.completed[strings.Clone(id)] = f.seq
}

// compress replaces the history with the compression's compressedHistory.
func (f *Fold) compress(rec *qwen.Record, ev events.Event) {
	clear(f.win)
	f.win, f.off = f.base[:0], 0
	f.keptInWin, f.evictedLen = 0, 0
	f.evictedPromptFound, f.evictedPromptID = false, ""
	f.shapeRun, f.flagRun = 0, 0
	if f.fp != nil {
		f.fp.clearHistory()
	}
	clear(f.ids)
	clear(f.idsShown)
	clear(f.tags)
	clear(f.completed)
	src := sourceOf(rec, ev)
	for _, c := range rec.Compression.History {
		e := Entry{
			Content:    qwen.Content{Role: c.Role, Parts: slices.Clip(c.Parts)},
			Compressed: true,
		}
		f.push(e, src)
		f.evict()
	}
	for _, id := range rec.Compression.CompletedToolCallIDs {
		if _, dup := f.completed[id]; !dup && f.unique(id) {
			f.complete(id)
		}
	}
	f.lastMaterial = nil
}

// Result returns the projection. The returned slices are the caller's.
func (f *Fold) Result() Result {
	res := Result{Records: f.records, TrailingSystemNotifications: f.flagRun}
	res.Tail = make([]Entry, 0, f.keptInWin)
	for i := range f.win {
		if v, ok := f.view(&f.win[i].Entry); ok {
			v.Content.Parts = slices.Clone(v.Content.Parts)
			v.PartSource = slices.Clone(v.PartSource)
			v.Sources = f.win[i].sources()
			res.Tail = append(res.Tail, v)
		}
	}
	res.Total = f.evictedLen + len(res.Tail)
	if len(f.completed) > 0 {
		ids := make([]string, 0, len(f.completed))
		for id := range f.completed {
			if f.uniqueShown(id) {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, func(a, b string) int { return f.completed[a] - f.completed[b] })
		if len(ids) > 0 {
			res.CompletedToolCallIDs = ids
		}
	}
	res.CancelledLastTurn = f.cancelledLastTurn(res.Tail)
	return res
}
