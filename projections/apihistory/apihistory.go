package apihistory

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// Source identifies one record an entry was built from, with the provenance
// its envelope carried. It is what lets a later decision ask "who wrote
// this?" instead of guessing from the text.
type Source struct {
	UUID       string
	Pos        events.Position
	Type       string
	Subtype    string
	Provenance events.Provenance
	Origin     events.Origin
	// DeliveredTurn is the record's deliveredTurn flag (newer writers only;
	// Qwen Code 0.24.4 never writes it).
	DeliveredTurn bool
	// BackgroundTurn is true when the record carries Qwen Code 0.24.4's
	// backgroundTurn stamp: it was written inside a background notification
	// turn.
	BackgroundTurn bool
}

// Entry is one api-history Content plus where it came from.
type Entry struct {
	Content qwen.Content
	// PartSource[i] indexes Sources for Content.Parts[i]: a mid-turn message
	// merged into an entry keeps its own record identity per part. Nil (or
	// shorter than Parts) means the remaining parts came from Sources[0].
	PartSource []int
	// Sources are the records behind the entry, in the order they
	// contributed. Sources[0] pushed the entry (for a compressed entry: the
	// chat_compression record whose compressedHistory held it).
	Sources []Source
	// PromptID is the reference's API_HISTORY_PROMPT_ID tag: set for entries
	// pushed by a user record with no subtype and a non-empty promptId.
	PromptID string
	// ColdNotification is the systemNotificationFlags bit: the pushing record
	// has provenance "system" and subtype "notification", and is not the user
	// entry of a turn — it carries neither 0.24.4's backgroundTurn stamp nor
	// (the fallback for newer writers) deliveredTurn. 0.24.4's own
	// isSystemNotificationRecord checks provenance and subtype only, so it
	// also trims a stamped notification whose turn never answered (#12042
	// shape A); the reference rules never read this bit (they trim by
	// shape). A merge never changes it.
	ColdNotification bool
	// Compressed is true for entries copied from a compression's
	// compressedHistory: raw Content with no per-entry record behind it.
	Compressed bool
}

// Describe is the entry's stable one-line form:
// role[parts] followed by the source uuids and provenances.
func (e Entry) Describe() string {
	s := DescribeContent(e.Content)
	if e.PromptID != "" {
		s += " promptId=" + e.PromptID
	}
	if e.ColdNotification {
		s += " cold"
	}
	if e.Compressed {
		s += " compressed"
	}
	s += " <-"
	for _, src := range e.Sources {
		s += " " + src.UUID
		if src.Origin != events.OriginNone {
			s += "(" + src.Provenance.String() + ")"
		}
	}
	return s
}

// DescribeContent prints role[part, part…] with every text in full: a
// verdict is judged on exact bytes, so nothing is shortened.
func DescribeContent(c qwen.Content) string {
	var b strings.Builder
	b.WriteString(c.Role)
	b.WriteByte('[')
	for i, p := range c.Parts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(DescribePart(p))
	}
	b.WriteByte(']')
	return b.String()
}

// DescribePart prints one part: quoted full text (thought: prefixed), or the
// call identity of a function part.
func DescribePart(p qwen.Part) string {
	s := p.Describe()
	if p.Kind == qwen.PartText {
		s = strconv.Quote(p.Text)
	}
	if p.Thought && !strings.HasPrefix(s, "thought:") {
		s = "thought:" + s
	}
	return s
}

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

type slot struct {
	Entry
	shapeRunBefore int // trailing shape-notification run of the kept history before this entry
	flagRunBefore  int // trailing cold-notification run of the kept history before this entry
}

type idCount struct{ calls, results int }

type promptHint struct {
	count  int
	idx    int
	daemon string
}

type resultHint struct {
	count     int
	idx       int
	cancelled bool // state cancelled with a cancelledAt
}

type attemptHint struct {
	ok       bool
	idx      int
	promptID string
	daemon   string
}

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

	ids       map[string]idCount // functionCall / functionResponse ids in the whole history
	idsShown  map[string]idCount // the same, without thought parts (StripThoughts only)
	completed map[string]int     // completedToolCallIds → insertion sequence
	seq       int
	tags      map[string]int // promptId tag → kept entries carrying it

	lastMaterial *qwen.Record

	// settlement hints over every record (isLastApiPromptCancelled)
	records  int
	prompts  map[string]*promptHint
	attempt  attemptHint
	daemons  map[string]int // non-result hints per daemonPromptId
	outcomes map[string]*resultHint
}

// New returns an empty fold.
func New(opts Options) *Fold {
	k := opts.Keep
	if k <= 0 {
		k = DefaultKeep
	}
	return &Fold{
		opts:      opts,
		keep:      k,
		ids:       map[string]idCount{},
		idsShown:  map[string]idCount{},
		completed: map[string]int{},
		tags:      map[string]int{},
		prompts:   map[string]*promptHint{},
		daemons:   map[string]int{},
		outcomes:  map[string]*resultHint{},
	}
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
		Sources:          []Source{src},
		ColdNotification: rec.Provenance == "system" && rec.Subtype == qwen.SubtypeNotification && !rec.HasBackground && !rec.DeliveredTurn,
	}
	if rec.Type == qwen.TypeUser && rec.Subtype == "" && rec.PromptID != "" {
		e.PromptID = rec.PromptID
	}
	f.push(e)
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
			f.seq++
			f.completed[strings.Clone(id)] = f.seq
		}
	}
}

// unique is hasUniqueToolResult over the whole current history.
func (f *Fold) unique(id string) bool {
	c := f.ids[id]
	return id != "" && c.calls == 1 && c.results == 1
}

// uniqueShown is hasUniqueToolResult over the finished history, where
// StripThoughts may have dropped a thought-flagged call or response.
func (f *Fold) uniqueShown(id string) bool {
	if !f.opts.StripThoughts {
		return f.unique(id)
	}
	c := f.idsShown[id]
	return id != "" && c.calls == 1 && c.results == 1
}

func count(m map[string]idCount, p qwen.Part, sign int) {
	c := m[p.ID]
	if p.Kind == qwen.PartFunctionCall {
		c.calls += sign
	} else {
		c.results += sign
	}
	if c.calls == 0 && c.results == 0 {
		delete(m, p.ID)
	} else {
		m[strings.Clone(p.ID)] = c // see hint: a key must not alias the record
	}
}

// compress replaces the history with the compression's compressedHistory.
func (f *Fold) compress(rec *qwen.Record, ev events.Event) {
	clear(f.win)
	f.win, f.off = f.base[:0], 0
	f.keptInWin, f.evictedLen = 0, 0
	f.evictedPromptFound, f.evictedPromptID = false, ""
	f.shapeRun, f.flagRun = 0, 0
	clear(f.ids)
	clear(f.idsShown)
	clear(f.tags)
	clear(f.completed)
	src := sourceOf(rec, ev)
	for _, c := range rec.Compression.History {
		e := Entry{
			Content:    qwen.Content{Role: c.Role, Parts: slices.Clip(c.Parts)},
			Sources:    []Source{src},
			Compressed: true,
		}
		f.push(e)
		f.evict()
	}
	for _, id := range rec.Compression.CompletedToolCallIDs {
		if _, dup := f.completed[id]; !dup && f.unique(id) {
			f.seq++
			f.completed[strings.Clone(id)] = f.seq
		}
	}
	f.lastMaterial = nil
}

// view is the entry as the finished history shows it.
func (f *Fold) view(e *Entry) (Entry, bool) {
	if !f.opts.StripThoughts || e.Content.Parts == nil {
		return *e, true
	}
	keep := 0
	for _, p := range e.Content.Parts {
		if !p.Thought {
			keep++
		}
	}
	if keep == 0 {
		return Entry{}, false
	}
	if keep == len(e.Content.Parts) {
		return *e, true
	}
	v := *e
	v.Content.Parts = make([]qwen.Part, 0, keep)
	v.PartSource = make([]int, 0, keep)
	for i, p := range e.Content.Parts {
		if !p.Thought {
			v.Content.Parts = append(v.Content.Parts, p)
			src := 0
			if i < len(e.PartSource) {
				src = e.PartSource[i]
			}
			v.PartSource = append(v.PartSource, src)
		}
	}
	return v, true
}

func (f *Fold) kept(e *Entry) bool {
	if !f.opts.StripThoughts || e.Content.Parts == nil {
		return true
	}
	for _, p := range e.Content.Parts {
		if !p.Thought {
			return true
		}
	}
	return false
}

// account adds (sign=1) or removes (sign=-1) an entry's ids and tag.
func (f *Fold) account(e *Entry, sign int) {
	for _, p := range e.Content.Parts {
		if !p.HasID || p.ID == "" || (p.Kind != qwen.PartFunctionCall && p.Kind != qwen.PartFunctionResponse) {
			continue
		}
		count(f.ids, p, sign)
		if f.opts.StripThoughts && !p.Thought {
			count(f.idsShown, p, sign)
		}
	}
	if e.PromptID != "" && f.kept(e) {
		f.tags[strings.Clone(e.PromptID)] += sign
		if f.tags[e.PromptID] == 0 {
			delete(f.tags, e.PromptID)
		}
	}
	if f.kept(e) {
		f.keptInWin += sign
	}
}

// runsAfter recomputes the trailing runs with s as the last entry.
func (f *Fold) runsAfter(s *slot) {
	if !f.kept(&s.Entry) {
		f.shapeRun, f.flagRun = s.shapeRunBefore, s.flagRunBefore
		return
	}
	v, _ := f.view(&s.Entry)
	f.shapeRun = 0
	if IsSystemNotificationContent(v.Content) {
		f.shapeRun = s.shapeRunBefore + 1
	}
	f.flagRun = 0
	if s.ColdNotification {
		f.flagRun = s.flagRunBefore + 1
	}
}

func (f *Fold) push(e Entry) {
	if len(f.win) == cap(f.win) && f.off > 0 && f.off >= len(f.win) {
		// More of the array is evicted than live: slide the window down and
		// reuse it rather than growing, so a long session allocates no slots.
		n := copy(f.base[:cap(f.base)], f.win)
		clear(f.base[n : n+f.off])
		f.win, f.off = f.base[:n], 0
	}
	old := cap(f.win)
	f.win = append(f.win, slot{Entry: e, shapeRunBefore: f.shapeRun, flagRunBefore: f.flagRun})
	if cap(f.win) != old {
		f.base, f.off = f.win[:0:cap(f.win)], 0
	}
	s := &f.win[len(f.win)-1]
	f.account(&s.Entry, 1)
	f.runsAfter(s)
}

func (f *Fold) pop() {
	s := &f.win[len(f.win)-1]
	f.account(&s.Entry, -1)
	f.shapeRun, f.flagRun = s.shapeRunBefore, s.flagRunBefore
	*s = slot{}
	f.win = f.win[:len(f.win)-1]
}

func (f *Fold) merge(rec *qwen.Record, src Source) {
	s := &f.win[len(f.win)-1]
	f.account(&s.Entry, -1)
	// Copy before appending: the entry's slices must never alias a record's
	// message or an earlier Result.
	idx := len(s.Sources)
	s.Sources = append(slices.Clip(s.Sources), src)
	s.Content.Parts = append(slices.Clip(s.Content.Parts), rec.Message.Parts...)
	ps := make([]int, len(s.Content.Parts)-len(rec.Message.Parts), len(s.Content.Parts))
	copy(ps, s.PartSource)
	for range rec.Message.Parts {
		ps = append(ps, idx)
	}
	s.PartSource = ps
	f.account(&s.Entry, 1)
	f.runsAfter(s)
}

// evict drops entries from the front that no Result can need. The bound is
// taken against the history WITHOUT its last entry (r = the run before it),
// so that a slash-command pop of that entry — the only way the history
// shrinks, and always the undo of the immediately preceding push — still
// leaves Keep exact entries before the restored run.
func (f *Fold) evict() {
	if f.opts.Unbounded || len(f.win) < 2 {
		return
	}
	last := &f.win[len(f.win)-1]
	m := f.keptInWin
	if f.kept(&last.Entry) {
		m--
	}
	r := last.shapeRunBefore
	n := 0
	for n < len(f.win)-1 && m-r > f.keep {
		s := &f.win[n]
		if f.kept(&s.Entry) {
			m--
			f.keptInWin--
			f.evictedLen++
			v, _ := f.view(&s.Entry)
			if isLastPromptCandidate(v.Content, v.PromptID != "") {
				f.evictedPromptFound, f.evictedPromptID = true, v.PromptID
			}
		}
		*s = slot{}
		n++
	}
	if n > 0 {
		f.win = f.win[n:]
		f.off += n
	}
}

// Result returns the projection. The returned slices are the caller's.
func (f *Fold) Result() Result {
	res := Result{Records: f.records, TrailingSystemNotifications: f.flagRun}
	res.Tail = make([]Entry, 0, f.keptInWin)
	for i := range f.win {
		if v, ok := f.view(&f.win[i].Entry); ok {
			v.Content.Parts = slices.Clone(v.Content.Parts)
			v.PartSource = slices.Clone(v.PartSource)
			v.Sources = slices.Clone(v.Sources)
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
