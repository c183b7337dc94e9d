package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/guards"
)

func init() {
	register(command{
		name:    "replay",
		summary: "step through a recorded session: what each event changed, every guard decision, what a crash at any point would decide",
		run:     runReplay,
	})
}

type replayFlags struct {
	sf        sessionFlags
	dsh       string
	dir       string
	asJSON    bool
	at        int
	crashAt   string
	reference bool
	now       int64
	html      string
}

const replayUsage = "usage: tailproof replay [--harness qwen] (--transcript|--file FILE [--ledger FILE] | --cwd WORKSPACE --session ID [--qwen-runtime DIR] | --dsh FILE | --dir DIR)\n" +
	"                        [--at N | --crash-at N|all] [--json] [--html FILE] [--reference] [--now MS]"

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, rest, done := routeHarness(ctx, args, stdout, stderr, runHarnessReplay); done {
		return code
	} else {
		args = rest
	}
	return cli.Main(stderr, "replay", func() error { return replay(ctx, args, stdout, stderr) })
}

func replay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("replay", replayUsage)
	var f replayFlags
	f.sf.register(fs)
	fs.StringVar(&f.dsh, "dsh", "", "a dsh session log (`FILE`) instead of a Qwen session")
	fs.StringVar(&f.dir, "dir", "", "batch mode: every session under `DIR` (Qwen runtime layout, or <id>.jsonl/<id>.ledger.jsonl pairs)")
	fs.BoolVar(&f.asJSON, "json", false, "one JSON object per line: each step, then the decision (batch: one summary object)")
	fs.IntVar(&f.at, "at", -1, "stop stepping after event `N` (the decision still covers the whole session)")
	fs.StringVar(&f.crashAt, "crash-at", "", "replay as if the process died right after event `N` (0: before any), or `all` for a table of every crash point")
	fs.BoolVar(&f.reference, "reference", false, "decide with exactly Qwen Code 0.24.4's rules")
	fs.Int64Var(&f.now, "now", 0, "the clock in Unix `MS` for a record recovery would append (default: the last event's time)")
	fs.StringVar(&f.html, "html", "", "also write a self-contained HTML timeline of the session to `FILE`")
	if err := fs.Parse(args, stdout); err != nil {
		return err
	}
	if fs.Given("at") {
		if err := cli.AtLeast("--at", f.at, 0); err != nil {
			return err
		}
	}
	if fs.Given("now") {
		if err := cli.UnixMillis("--now", f.now); err != nil {
			return err
		}
	}
	if f.at >= 0 && f.crashAt != "" {
		return cli.Usagef("give --at or --crash-at, not both")
	}
	if f.dir != "" {
		if f.dsh != "" || f.sf.ledger != "" || f.sf.transcript != "" || f.sf.session != "" || f.at >= 0 || f.crashAt != "" || f.html != "" {
			return cli.Usagef("--dir takes only --json, --reference and --now")
		}
		return runReplayBatch(ctx, f, stdout, stderr)
	}
	if f.dsh != "" && !replayWholeFile {
		// A dsh log streams when it can be read twice: it is never held.
		if err := replayDSHStreaming(ctx, f, stdout, stderr); !errors.Is(err, errNotStreamable) {
			return err
		}
	}
	if f.dsh == "" && !replayWholeFile {
		// A Qwen session the one pass can follow streams: its transcript
		// is never held.
		if err := replayStreaming(ctx, f, stdout, stderr); !errors.Is(err, errNotStreamable) {
			return err
		}
	}
	s, err := loadReplaySession(ctx, f)
	if err != nil {
		return err
	}
	total := s.ev.Len()
	if f.crashAt == "all" {
		if f.at > total {
			return cli.Usagef("--at %d is past the last event (%d)", f.at, total)
		}
		return replayCrashTable(ctx, f, s, stdout, stderr)
	}
	stop, decideAt, crash, err := replayRange(f, total)
	if err != nil {
		return err
	}
	w := &replayWriter{w: stdout, json: f.asJSON}
	st := newStepper(s)
	// A session that is not one linear chain re-folds the evidence so far
	// at each step after its first break: a long one takes a while.
	bar := cli.NewProgress(stderr, "replay", stop)
	for i := range stop {
		w.step(st.next(), total)
		bar.Set(i+1, "")
	}
	bar.Done()
	out := decide(ctx, s, decideAt, f.reference, f.now)
	w.outcome(out, total, crash, replayWarnings(s, f))
	if f.html != "" {
		crashPoint := -1
		if crash {
			crashPoint = decideAt
		}
		if err := writeReplayHTML(f.html, pageOf(s, out, crashPoint)); err != nil {
			return err
		}
	}
	if w.err != nil {
		return cli.WithCode(cli.Write, w.err)
	}
	// A --now the decision refused (before its prompt's admission) is the
	// usage error it is in reconcile, once the replay is printed.
	if f.now != 0 && errors.Is(out.err, tailproof.ErrInvalidClock) {
		return cli.Clock(out.err, "--now", true)
	}
	return nil
}

// replayRange is where --at and --crash-at N stop the stepping, where the
// decision is taken and whether it is a crash's, over total events.
func replayRange(f replayFlags, total int) (stop, decideAt int, crash bool, err error) {
	if f.at > total {
		return 0, 0, false, cli.Usagef("--at %d is past the last event (%d)", f.at, total)
	}
	stop, decideAt = total, total
	if f.at >= 0 {
		stop = f.at
	}
	if f.crashAt != "" {
		n, err := strconv.Atoi(f.crashAt)
		if err != nil || n < 0 || n > total {
			return 0, 0, false, cli.Usagef("--crash-at wants all or an event number from 0 to %d, got %q", total, f.crashAt)
		}
		stop, decideAt, crash = n, n, true
	}
	return stop, decideAt, crash, nil
}

func loadReplaySession(ctx context.Context, f replayFlags) (*session, error) {
	if f.dsh != "" {
		if f.sf.ledger != "" || f.sf.transcript != "" || f.sf.session != "" || f.sf.cwd != "" || f.sf.runtime != "" {
			return nil, cli.Usagef("--dsh takes no Qwen session flags")
		}
		rc, err := cli.OpenNamed("--dsh", f.dsh)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		s, err := readDSHLog(f.dsh, rc, dshMaxLine)
		return s, cli.WithCode(cli.Input, err)
	}
	sess, err := f.sf.open()
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	name := sess.ID
	if name == "" {
		name = f.sf.transcript
	}
	s, err := loadStore(ctx, sess.Store, sess.ID, name)
	return s, cli.WithCode(cli.Input, err)
}

// replayWholeFile makes every replay take the whole-file path (tests
// compare the streamed one with it).
var replayWholeFile bool

// replayWarnings are the input warnings of the files replayed: lines that
// did not decode, counted with their first positions.
func replayWarnings(s *session, f replayFlags) []string {
	paths, roles := warningNames(f, s.dsh)
	out := noLedgerWarning(f, s.dsh)
	for i, src := range s.ev.Sources {
		if roles[i] == "" || !s.exists[i] {
			continue
		}
		var sum badSummary
		for _, b := range src.Bad {
			sum.add(b)
		}
		out = append(out, sum.warnings(paths[i], roles[i], len(src.Events))...)
	}
	return out
}

// noLedgerWarning says that a replay of --transcript alone read no ledger:
// its events are the transcript's, and no prompt is in flight at any crash
// point.
func noLedgerWarning(f replayFlags, dsh bool) []string {
	if dsh || f.sf.ledger != "" || f.sf.transcript == "" {
		return []string{}
	}
	return []string{"ledger: none: " + cli.NoLedgerNote}
}

// warningNames are the paths and roles replayWarnings names the files by.
func warningNames(f replayFlags, dsh bool) (paths, roles [2]string) {
	paths = [2]string{f.sf.ledger, f.sf.transcript}
	roles = [2]string{"ledger", "transcript"}
	if dsh {
		paths, roles = [2]string{f.dsh}, [2]string{"dsh log"}
	} else if f.sf.session != "" {
		paths = [2]string{"of session " + f.sf.session, "of session " + f.sf.session}
	}
	return paths, roles
}

// badSummary is what a file's warning says of its undecodable lines: how
// many, the first positions, and whether the last is a torn tail.
type badSummary struct {
	n     int
	first []cli.Position
	torn  bool
}

func (b *badSummary) add(e *events.Error) {
	b.n++
	b.torn = errors.Is(e, events.ErrTornTail)
	if len(b.first) < cli.FirstPositions {
		b.first = append(b.first, cli.Position{Line: e.Pos.Line, Offset: e.Pos.Offset, Reason: e.Detail})
	}
}

func (b *badSummary) warnings(path, role string, records int) []string {
	rep := cli.FileReport{Path: path, Present: true, Checked: true, Records: new(records), Undecodable: b.n, TornTail: b.torn, First: b.first}
	return rep.Warnings(role)
}

// replayWriter prints steps and outcomes as text or JSON lines, keeping the
// first write error.
type replayWriter struct {
	w    io.Writer
	json bool
	err  error
}

func (r *replayWriter) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

func (r *replayWriter) encode(v any) {
	if r.err != nil {
		return
	}
	r.err = cli.WriteDoc(r.w, v, false)
}

func (r *replayWriter) step(s step, total int) {
	if r.json {
		r.encode(s)
		return
	}
	r.printf("step %d/%d  %s\n", s.N, total, s.Event)
	for _, p := range s.Changed {
		r.printf("  %-15s %s\n", p.Name+":", p.State)
	}
	if len(s.Same) > 0 {
		r.printf("  %-15s %s\n", "unchanged:", strings.Join(s.Same, ", "))
	}
	for _, it := range s.Items {
		r.printf("  %-15s + %s\n", "timeline:", it.Describe())
	}
}

func (r *replayWriter) outcome(o outcome, total int, crash bool, warnings []string) {
	if r.json {
		r.encode(struct {
			Decision outcome  `json:"decision"`
			Events   int      `json:"events"`
			Crash    bool     `json:"crash"`
			Warnings []string `json:"warnings"`
		}{o, total, crash, warnings})
		return
	}
	defer func() {
		for _, l := range warnings {
			r.printf("  warning:  %s\n", l)
		}
	}()
	if crash {
		r.printf("\ncrash right after event %d of %d; recovery (dry run, in memory) would decide:\n", o.At, total)
	} else {
		r.printf("\nrecovery over all %d events (dry run, in memory) would decide:\n", total)
	}
	r.printf("  verdict:  %s\n", o.Verdict)
	if o.Target != "" {
		r.printf("  target:   %s\n", o.Target)
	}
	for _, a := range o.Append {
		r.printf("  append:   %s\n", a)
	}
	for _, v := range o.Vetoes {
		r.printf("  veto:     %s: %s\n", v.Guard, v.Reason)
	}
	if o.Error != "" {
		r.printf("  error:    %s\n", o.Error)
	}
	if len(o.Guards) > 0 {
		r.printf("  guard decisions:\n")
		for _, g := range o.Guards {
			if g.Pass {
				r.printf("    %-15s %-22s pass\n", g.Event, g.Guard)
			} else {
				r.printf("    %-15s %-22s VETO: %s\n", g.Event, g.Guard, g.Reason)
			}
		}
	}
	if o.GuardsNote != "" {
		r.printf("  guard decisions: %s\n", o.GuardsNote)
	}
	if len(o.Trace) > 0 {
		r.printf("  trace (folds and machine transitions):\n")
		for _, t := range o.Trace {
			r.printf("    %s\n", t)
		}
	}
}

// crashRow is one line of the --crash-at all table.
type crashRow struct {
	At      int      `json:"at"`
	Event   string   `json:"event"`
	Verdict string   `json:"verdict"`
	Target  string   `json:"target,omitempty"`
	Guards  []string `json:"vetoedBy"`
	Error   string   `json:"error,omitempty"`
}

// crashRows decides every crash point of s: in one pass while the
// transcript is one clean linear chain (replay_cuts.go), from each cut's
// bytes otherwise (or everywhere, without onePass).
func crashRows(ctx context.Context, s *session, reference bool, now int64, bar *cli.Progress) []crashRow {
	rows, _ := crashRowsWith(ctx, s, reference, now, bar, true)
	return rows
}

// crashRowsWith is crashRows; passed counts the crash points the one pass
// decided.
func crashRowsWith(ctx context.Context, s *session, reference bool, now int64, bar *cli.Progress, onePass bool) (rows []crashRow, passed int) {
	rows = make([]crashRow, 0, s.ev.Len()+1)
	var pass *crashPass
	if onePass {
		pass = newCrashPass(s, reference)
	}
	var last int64 // lastTime(s.ev, n), kept as the events go by
	for n := 0; n <= s.ev.Len(); n++ {
		bar.Set(n+1, "")
		var row crashRow
		if n == 0 {
			row = crashRowAt(0, nil)
		} else {
			e := s.ev.Event(n - 1)
			row = crashRowAt(n, &e)
			if e.Time.OK && e.Time.Ms > last {
				last = e.Time.Ms
			}
			if pass != nil && !pass.add(e) {
				pass = nil
			}
		}
		if pass != nil {
			if res, ok, err := pass.decide(ctx, clockOr(now, last)); ok {
				row.fill(res, err)
				rows = append(rows, row)
				passed++
				continue
			}
		}
		row.fillOutcome(decide(ctx, s, n, reference, now))
		rows = append(rows, row)
	}
	return rows, passed
}

// clockOr is the replayed clock: --now, else the latest event time so far.
func clockOr(now, last int64) int64 {
	if now != 0 {
		return now
	}
	return last
}

// crashRowAt is the row of the crash right after event n (e; nil for 0).
func crashRowAt(n int, e *events.Event) crashRow {
	row := crashRow{At: n, Event: "(before any event)", Guards: []string{}}
	if e != nil {
		row.Event = fmt.Sprintf("%s:%d %s", e.Stream, e.Pos.Line, e.Kind)
	}
	return row
}

// fill sets the row's decision from a reconciliation (decide's verdictOf).
func (r *crashRow) fill(res tailproof.Result, err error) {
	var vetoes []guards.Veto
	r.Verdict, r.Target, _, vetoes = verdictOf(res, err, nil)
	if err != nil {
		r.Error = err.Error()
	}
	for _, v := range vetoes {
		r.Guards = append(r.Guards, v.Guard)
	}
}

func (r *crashRow) fillOutcome(o outcome) {
	r.Verdict, r.Target, r.Error = o.Verdict, o.Target, o.Error
	for _, v := range o.Vetoes {
		r.Guards = append(r.Guards, v.Guard)
	}
}

func replayCrashTable(ctx context.Context, f replayFlags, s *session, stdout, stderr io.Writer) error {
	bar := cli.NewProgress(stderr, "crash points", s.ev.Len()+1)
	rows := crashRows(ctx, s, f.reference, f.now, bar)
	bar.Done()
	w := &replayWriter{w: stdout, json: f.asJSON}
	printCrashTable(w, rows, replayWarnings(s, f))
	if f.html != "" {
		if err := writeReplayHTML(f.html, pageOf(s, decide(ctx, s, s.ev.Len(), f.reference, f.now), -1)); err != nil {
			return err
		}
	}
	if w.err != nil {
		return cli.WithCode(cli.Write, w.err)
	}
	return nil
}

// printCrashTable prints the --crash-at all table (JSON: one row a line).
func printCrashTable(w *replayWriter, rows []crashRow, warnings []string) {
	t := newCrashTable(w)
	for _, r := range rows {
		t.row(r)
	}
	t.end(warnings)
}

func orDashStr(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
