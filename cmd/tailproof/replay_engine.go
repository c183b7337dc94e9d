package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines/reconcile"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/projections/dshrecovery"
	"github.com/tailproof/tailproof/projections/ledgerview"
	"github.com/tailproof/tailproof/projections/timeline"
	"github.com/tailproof/tailproof/projections/turns"
)

// session is one recorded session held in memory: replay reads the user's
// files once and never opens them again, so nothing it does can write there.
type session struct {
	name string
	dsh  bool
	v0   *dshV0 // a dsh format v0 log (replay_dsh_v0.go)
	// exists says which files were present (a missing transcript is evidence
	// too: "transcript missing").
	exists [2]bool
	ev     *timeline.Evidence
}

// loadStore reads a session's two files through the store the flags name.
func loadStore(ctx context.Context, st adapters.Store, sid, name string) (*session, error) {
	var data [2][]byte
	var exists [2]bool
	open := [2]func() (io.ReadCloser, error){
		func() (io.ReadCloser, error) { return st.OpenLedger(ctx, sid) },
		func() (io.ReadCloser, error) { return st.OpenTranscript(ctx, sid) },
	}
	for i, o := range open {
		rc, err := o()
		if err != nil {
			if errors.Is(err, adapters.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("read %s: %w", [2]string{"ledger", "transcript"}[i], err)
		}
		b, err := readLines(rc, [2]events.Stream{events.StreamLedger, events.StreamTranscript}[i], 0)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", [2]string{"ledger", "transcript"}[i], err)
		}
		// An empty ledger is what OpenLedger returns for a missing one.
		data[i], exists[i] = b, i == 1 || len(b) > 0
	}
	return newQwenSession(name, data, exists)
}

// readLines reads a whole session file, refusing a line longer than max
// bytes (<= 0: events.DefaultMaxLineBytes) with an *events.Error of kind
// events.ErrLineTooLong at the line's position, after reading at most one
// read past the limit: a file that never ends a line (a runaway writer)
// stops the replay instead of filling memory.
func readLines(r io.Reader, stream events.Stream, max int) ([]byte, error) {
	if max <= 0 {
		max = events.DefaultMaxLineBytes
	}
	var buf []byte
	line, start := 1, 0 // the current line's number and offset in buf
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		from := len(buf)
		buf = buf[:from+n]
		// Every line this read completed is measured, not only the last:
		// one read can hold a whole over-long line and its newline.
		for i := from; ; {
			nl := bytes.IndexByte(buf[i:], '\n')
			if nl < 0 {
				break
			}
			if i+nl-start > max {
				return nil, tooLong(stream, line, start, max)
			}
			line, start = line+1, i+nl+1
			i = start
		}
		if len(buf)-start > max {
			return nil, tooLong(stream, line, start, max)
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func tooLong(stream events.Stream, line, start, max int) error {
	return &events.Error{Stream: stream, Pos: events.Position{Line: line, Offset: int64(start)}, Kind: events.ErrLineTooLong,
		Detail: fmt.Sprintf("more than %d bytes without a newline", max)}
}

func newQwenSession(name string, data [2][]byte, exists [2]bool) (*session, error) {
	ev, err := timeline.QwenEvidence(data[0], data[1], 0)
	if err != nil {
		return nil, err
	}
	return &session{name: name, exists: exists, ev: ev}, nil
}

func newDSHSession(name string, data []byte) (*session, error) {
	ev, err := timeline.DSHEvidence(data, 0)
	if err != nil {
		return nil, err
	}
	return &session{name: name, dsh: true, exists: [2]bool{true, false}, ev: ev}, nil
}

// projection is one named projection's state after a step, as one line.
type projection struct {
	Name  string `json:"projection"`
	State string `json:"state"`
}

// step is what one event changed.
type step struct {
	N       int             `json:"step"`
	Event   string          `json:"event"`
	Changed []projection    `json:"changed"`
	Same    []string        `json:"unchanged"`
	Items   []timeline.Item `json:"timeline"`
}

// stepper folds a session event by event. While the transcript is one
// linear chain its projections are folded one record at a time
// (replay_incremental.go); once a record branches, rewinds or cannot be
// read, they are recomputed from the bytes of the cut at every step (the
// active chain can change shape), which is O(n²) over a session. Either way
// each step's state is exactly what recovery would have seen had the process
// died there.
type stepper struct {
	s     *session
	n     int
	view  *ledgerview.View
	trans int // transcript events so far
	enc   *turns.Enclosure
	fold  dshrecovery.Fold // for a v0 log
	tl    *timeline.Timeline
	last  map[string]string
	order []string
	inc   *incremental // nil once the transcript stops being one linear chain
	// forget: keep no timeline items (a streamed replay prints each step's).
	forget bool
}

func newStepper(s *session) *stepper {
	st := &stepper{s: s, view: ledgerview.New(), enc: &turns.Enclosure{}, tl: timeline.New(), last: map[string]string{}}
	if !s.dsh && len(s.ev.Sources[1].Bad) == 0 {
		st.inc = newIncremental()
	}
	if s.dsh {
		st.order = []string{"turn enclosure"}
	} else {
		st.order = []string{"ledger view", "api history", "attribution"}
	}
	return st
}

func (st *stepper) next() step { return st.nextOf(st.s.ev.Event(st.n)) }

// nextOf steps event ev, the session's next.
func (st *stepper) nextOf(ev events.Event) step {
	st.n++
	states := map[string]string{}
	switch body := ev.Body.(type) {
	case *dsh.EventBody:
		if err := st.enc.Apply(body.Record); err != nil {
			states["turn enclosure"] = "error: " + err.Error()
		} else {
			states["turn enclosure"] = st.enc.Describe()
		}
	case *dshV0Body:
		_ = st.fold.Apply(body.rec)
		states["turn enclosure"] = st.fold.Describe()
	default:
		if ev.Stream == events.StreamLedger {
			if rec, ok := asLedger(ev); ok {
				st.view.Add(rec)
			}
		} else {
			st.trans++
			if st.inc != nil && !st.inc.add(ev) {
				st.inc = nil
			}
		}
		states["ledger view"] = describeView(st.view)
		var hist, attr string
		if st.inc != nil {
			hist, attr = st.inc.states(st.view)
		} else {
			hist, attr = transcriptStates(st.view, st.trans, st.s.ev.Cut(st.n)[1])
		}
		states["api history"], states["attribution"] = hist, attr
	}
	out := step{N: st.n, Event: ev.Describe(), Changed: []projection{}, Same: []string{}}
	for _, name := range st.order {
		if states[name] != st.last[name] {
			out.Changed = append(out.Changed, projection{Name: name, State: states[name]})
		} else {
			out.Same = append(out.Same, name)
		}
		st.last[name] = states[name]
	}
	out.Items = append([]timeline.Item{}, st.tl.Add(ev)...)
	if st.forget {
		st.tl.Forget()
	}
	return out
}

func describeView(v *ledgerview.View) string {
	b := fmt.Sprintf("%d records, dangling [%s]", v.Len(), strings.Join(v.Dangling(), " "))
	if a, ok := v.LatestUnsettledAdmission(); ok {
		b += ", latest unsettled admission " + a.Describe()
	}
	return b
}

// transcriptStates are the api-history and attribution projections over the
// active chain of the transcript as it stood after this step (its first
// bytes), built by the same streaming chain reader Reconcile uses.
func transcriptStates(view *ledgerview.View, seen int, transcript []byte) (string, string) {
	if seen == 0 {
		return "empty", "no transcript"
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(transcript)), nil }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil {
		return "error: " + err.Error(), "error: " + err.Error()
	}
	dangling := view.Dangling()
	var f *attribution.Fold
	if len(dangling) > 0 {
		adm, _ := view.LatestUnsettledAdmission()
		f = attribution.New(dangling[0], adm.TailUUID, adm.AtFloat())
	}
	acc := apihistory.New(apihistory.Options{})
	werr := chain.Walk(open, func(_ int, e events.Event) error {
		if f != nil {
			f.Add(e)
		}
		return acc.Add(e)
	})
	if werr != nil {
		return "error: " + werr.Error(), "error: " + werr.Error()
	}
	return describeFolds(acc, f, dangling)
}

func describeFolds(acc *apihistory.Fold, f *attribution.Fold, dangling []string) (string, string) {
	hist := "empty"
	if total, completed, trailing, last, ok := acc.Summary(); ok && total > 0 {
		hist = fmt.Sprintf("%d entries, %d completed tool calls, %d trailing notifications, last %s",
			total, completed, trailing, last.Describe())
	}
	if f == nil {
		return hist, "no dangling prompt to attribute"
	}
	return hist, describeTranscriptEvidence(dangling[0], f.Evidence())
}

func describeTranscriptEvidence(target string, t guards.TranscriptEvidence) string {
	s := fmt.Sprintf("target %s: chain %d, marker %s, after admission %d (visible %d, non-system %d), last visible %s",
		target, t.ChainLen, marker(t), t.AfterAdmission, t.VisibleAfter, t.NonSystemAfter, orNone(t.LastVisibleType))
	if t.CompressedAfter {
		s += ", compressed after admission"
	}
	if t.BackgroundKind != "" {
		s += ", background " + t.BackgroundKind
	}
	if o := t.Ownership; o.Active {
		if o.TargetIdx < 0 {
			s += ", no own record"
		} else {
			s += fmt.Sprintf(", own record #%d", o.TargetIdx)
		}
		if o.FollowedBy != "" {
			s += ", followed by " + o.FollowedBy
		}
		if o.TurnResult != "" {
			s += ", turn_result " + o.TurnResult
		}
	}
	return s
}

func marker(t guards.TranscriptEvidence) string {
	switch {
	case t.MarkerUUID == "":
		return "none"
	case t.MarkerIdx < 0:
		return t.MarkerUUID + " (absent)"
	}
	return fmt.Sprintf("#%d", t.MarkerIdx)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// outcome is what recovery decides over a cut of the evidence.
type outcome struct {
	At       int           `json:"at"`
	Verdict  string        `json:"verdict"`
	Target   string        `json:"target,omitempty"`
	Dangling []string      `json:"dangling"`
	Append   []string      `json:"append"`
	Vetoes   []guards.Veto `json:"vetoes"`
	State    string        `json:"state,omitempty"`
	Trace    []string      `json:"trace"`
	// Guards is every guard's answer at every step the machine attempted
	// (Qwen sessions only); GuardsNote says why it is empty when it is.
	Guards     []guardDecision `json:"guards"`
	GuardsNote string          `json:"guardsNote,omitempty"`
	// Decision is the whole reconciliation in its one published shape (that
	// of reconcile --json); the fields above explain the step's decision.
	Decision json.RawMessage `json:"decision,omitempty"`
	Error    string          `json:"error,omitempty"`
	// err is Reconcile's error behind Error (for the exit code).
	err error
}

// decide runs recovery, as a dry run, over the bytes a crash right after
// merged event n would have left, in an in-memory filesystem.
func decide(ctx context.Context, s *session, n int, reference bool, now int64) outcome {
	cut := s.ev.Cut(n)
	out, mem := newOutcome(n)
	if out.Error != "" {
		return out
	}
	if s.v0 != nil {
		return decideDSHV0(mem, s, cut[0], out)
	}
	if s.dsh {
		return decideDSH(mem, cut[0], out)
	}
	if now == 0 {
		now = lastTime(s.ev, n)
	}
	return decideQwenCut(ctx, mem, cut, s.exists, reference, now, out)
}

// decideQwenCut is decide's dry-run Reconcile of a Qwen cut (the files that
// exist), written to mem, with the clock reading now.
func decideQwenCut(ctx context.Context, mem *memory.FS, cut [2][]byte, exists [2]bool, reference bool, now int64, out outcome) outcome {
	const lp, tp = "/replay/session.ledger.jsonl", "/replay/session.jsonl"
	for i, p := range []string{lp, tp} {
		if exists[i] {
			if err := mem.WriteFile(p, cut[i], 0o644); err != nil {
				out.Error = err.Error()
				return out
			}
		}
	}
	opts := tailproof.Options{Now: func() int64 { return now }, DryRun: true, Reference: reference}
	res, err := tailproof.Reconcile(ctx, jsonl.NewFilesStore(mem, lp, tp), "", opts)
	return outcomeOf(res, err, reference, out)
}

// outcomeOf fills out from a dry-run reconciliation and its error.
func outcomeOf(res tailproof.Result, err error, reference bool, out outcome) outcome {
	if err != nil {
		out.Error, out.err = err.Error(), err
	}
	out.Dangling = append(out.Dangling, res.Dangling...) // [] when none, never null
	out.Verdict, out.Target, out.State, out.Vetoes = verdictOf(res, err, out.Vetoes)
	for _, a := range res.Appended() {
		out.Append = append(out.Append, string(a.Line))
	}
	out.Trace = res.Trace
	if doc, err := json.Marshal(res); err == nil {
		out.Decision = doc
	}
	// The step shows the decision of the prompt the transcript's tail
	// speaks about: the first that appended, else the first considered.
	if d, ok := primaryDecision(res); ok {
		if gs, ok := explainGuards(d.Steps, d.Evidence, d.Vetoes, reference); ok {
			out.Guards = append(out.Guards, gs...)
		} else {
			out.GuardsNote = "replay's guard list no longer matches the reconcile machine's; only the machine's vetoes are shown"
		}
	}
	return out
}

// verdictOf is the step's verdict, target, machine state and vetoes
// (appended to vetoes) of a reconciliation: that of its primary decision;
// none when nothing dangled; unknown when it failed before deciding.
func verdictOf(res tailproof.Result, err error, vetoes []guards.Veto) (verdict, target, state string, _ []guards.Veto) {
	if d, ok := primaryDecision(res); ok {
		return string(d.Verdict), d.Target, string(d.State), append(vetoes, d.Vetoes...)
	}
	if len(res.Decisions) == 0 && err != nil {
		return string(tailproof.VerdictUnknown), "", "", vetoes
	}
	return string(tailproof.VerdictNone), "", string(reconcile.None), vetoes
}

// newOutcome is an empty outcome at n and the in-memory filesystem to
// decide it in (out.Error says why there is none).
func newOutcome(n int) (outcome, *memory.FS) {
	out := outcome{At: n, Dangling: []string{}, Append: []string{}, Vetoes: []guards.Veto{}, Trace: []string{}, Guards: []guardDecision{}}
	mem := memory.NewFS()
	if err := mem.MkdirAll("/replay", 0o755); err != nil {
		out.Error = err.Error()
	}
	return out, mem
}

func primaryDecision(res tailproof.Result) (tailproof.Decision, bool) {
	if a := res.Appended(); len(a) > 0 {
		return a[0], true
	}
	if len(res.Decisions) > 0 {
		return res.Decisions[0], true
	}
	return tailproof.Decision{}, false
}

func decideDSH(mem *memory.FS, data []byte, out outcome) outcome {
	if err := mem.WriteFile(dshV1ReplayPath, data, 0o644); err != nil {
		out.Error = err.Error()
		return out
	}
	rec, err := dshlog.RecoverV1(mem, dshV1ReplayPath)
	if err != nil {
		return dshV1Outcome(nil, rec.Repair, err, true, out)
	}
	enc := &turns.Enclosure{}
	for _, r := range rec.Events[:len(rec.Events)-len(rec.Repair.Closers)] {
		if err := enc.Apply(r); err != nil {
			break
		}
	}
	return dshV1Outcome(enc, rec.Repair, nil, true, out)
}

// dshV1ReplayPath is where a v1 cut is recovered (in memory): its name is
// in recovery's errors.
const dshV1ReplayPath = "/replay/session.jsonl"

// dshV1Outcome fills out from RecoverV1's decision over a cut — the turn
// enclosure of its preserved events, its repair — or its refusal err;
// trace false leaves the trace and the appended lines out.
func dshV1Outcome(enc *turns.Enclosure, repair adapters.Repair, err error, trace bool, out outcome) outcome {
	if err != nil {
		out.Verdict, out.Error = "unloadable", err.Error()
		return out
	}
	if trace {
		out.Trace = append(out.Trace, "fold log: "+enc.Describe())
		if repair.TruncatedBytes > 0 {
			out.Trace = append(out.Trace, fmt.Sprintf("repair: cut a torn final fragment of %d bytes", repair.TruncatedBytes))
		}
	}
	out.Verdict = "balanced"
	if len(repair.Closers) > 0 {
		out.Verdict = "interrupted"
		if t, ok := enc.OpenTurn(); ok {
			out.Target = fmt.Sprintf("turn %d", t)
		}
	}
	for _, c := range repair.Closers {
		if trace {
			out.Append = append(out.Append, c.Type+" "+string(c.Data))
			out.Trace = append(out.Trace, "repair: append "+c.Type)
		}
	}
	return out
}

// lastTime is the latest event time in the first n merged events: the
// replayed clock, so a replay prints the same bytes every run.
func lastTime(ev *timeline.Evidence, n int) int64 {
	var t int64
	for i := range min(n, ev.Len()) {
		if e := ev.Event(i); e.Time.OK && e.Time.Ms > t {
			t = e.Time.Ms
		}
	}
	return t
}
