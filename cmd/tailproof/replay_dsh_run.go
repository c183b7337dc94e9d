package main

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/projections/timeline"
)

// replayDSHStreaming is `replay --dsh FILE` without holding the log
// (replay_dsh_stream.go): the same output as the whole-file replay, byte
// for byte. errNotStreamable, having read nothing, when the file cannot be
// read twice (it does not seek).
func replayDSHStreaming(_ context.Context, f replayFlags, stdout, stderr io.Writer) error {
	if f.sf.ledger != "" || f.sf.transcript != "" || f.sf.session != "" || f.sf.cwd != "" || f.sf.runtime != "" {
		return cli.Usagef("--dsh takes no Qwen session flags")
	}
	rc, err := cli.OpenNamed("--dsh", f.dsh)
	if err != nil {
		return err
	}
	defer rc.Close()
	file, ok := rc.(io.ReadSeeker)
	if !ok {
		return errNotStreamable
	}
	s, err := openDSHStream(f.dsh, file, dshMaxLine)
	if err != nil {
		return cli.WithCode(cli.Input, err)
	}
	var page *timeline.Timeline
	if f.html != "" {
		page = timeline.New()
	}
	w := &replayWriter{w: stdout, json: f.asJSON}
	if f.crashAt == "all" {
		err = s.crashTable(w, page, f, stderr)
	} else {
		err = s.steps(w, page, f, stderr)
	}
	if err != nil {
		return err
	}
	if w.err != nil {
		return cli.WithCode(cli.Write, w.err)
	}
	return nil
}

// warnings are the replay's input warnings (replayWarnings).
func (s *dshStream) warnings() []string {
	return append([]string{}, s.bad.warnings(s.name, "dsh log", s.total)...)
}

// crashTable prints the --crash-at all table as the points are decided
// (a row is never kept), the progress on a terminal.
func (s *dshStream) crashTable(w *replayWriter, page *timeline.Timeline, f replayFlags, stderr io.Writer) error {
	if f.at > s.total {
		return cli.Usagef("--at %d is past the last event (%d)", f.at, s.total)
	}
	bar := cli.NewProgress(stderr, "crash points", s.total+1)
	t := newCrashTable(w)
	var last events.Event
	var final outcome
	err := s.walkShown(dshWalk{
		at: func(n int, p dshPoint) error {
			bar.Set(n+1, "")
			var row crashRow
			if n == 0 {
				row = crashRowAt(0, nil)
			} else {
				row = crashRowAt(n, &last)
			}
			if page != nil && n == s.total {
				final = p.outcome(true)
				row.fillOutcome(final)
			} else {
				row.fillOutcome(p.outcome(false))
			}
			t.row(row)
			return nil
		},
		step: func(e events.Event) error {
			last = events.Event{Stream: e.Stream, Pos: e.Pos, Kind: e.Kind}
			return nil
		},
	}, page, bar)
	if err != nil {
		return err
	}
	t.end(s.warnings())
	if page != nil {
		return writeReplayHTML(f.html, replayPageOf{name: s.name, dsh: true, events: s.total, items: page.Items(), out: final, crashAt: -1})
	}
	return nil
}

// steps prints each step up to --at or --crash-at N and the decision at
// its point, the progress on a terminal.
func (s *dshStream) steps(w *replayWriter, page *timeline.Timeline, f replayFlags, stderr io.Writer) error {
	stop, decideAt, crash, err := replayRange(f, s.total)
	if err != nil {
		return err
	}
	st := newStepper(&session{dsh: true, ev: &timeline.Evidence{}})
	st.forget = true
	bar := cli.NewProgress(stderr, "replay", stop)
	var out outcome
	taken := 0
	err = s.walkShown(dshWalk{
		at: func(n int, p dshPoint) error {
			if n == decideAt {
				out = p.outcome(true)
				if page == nil && n >= stop {
					return errStopWalk
				}
			}
			return nil
		},
		step: func(e events.Event) error {
			if taken < stop {
				w.step(st.nextOf(e), s.total)
				bar.Set(taken+1, "")
			}
			taken++
			return nil
		},
	}, page, bar)
	if err != nil {
		return err
	}
	w.outcome(out, s.total, crash, s.warnings())
	if page != nil {
		crashPoint := -1
		if crash {
			crashPoint = decideAt
		}
		return writeReplayHTML(f.html, replayPageOf{name: s.name, dsh: true, events: s.total, items: page.Items(), out: out, crashAt: crashPoint})
	}
	return nil
}

// walkShown is walk with every event's timeline item kept for the page
// (when there is one) and the progress bar ended.
func (s *dshStream) walkShown(w dshWalk, page *timeline.Timeline, bar *cli.Progress) error {
	if page != nil {
		step := w.step
		w.step = func(e events.Event) error {
			page.Add(e)
			return step(e)
		}
	}
	err := s.walk(w)
	bar.Done()
	return cli.WithCode(cli.Input, err)
}

// lineGuard reads r, refusing a line longer than max bytes (<= 0:
// events.DefaultMaxLineBytes) as readLines does — an *events.Error of kind
// events.ErrLineTooLong at the line's position, after at most one read past
// the limit — so a log that never ends a line stops the replay instead of
// being read on. n counts the bytes read.
type lineGuard struct {
	r      io.Reader
	stream events.Stream
	max    int
	line   int   // the current line's number
	start  int64 // and offset
	n      int64
	err    error
}

func newLineGuard(r io.Reader, stream events.Stream, max int) *lineGuard {
	if max <= 0 {
		max = events.DefaultMaxLineBytes
	}
	return &lineGuard{r: r, stream: stream, max: max, line: 1}
}

func (g *lineGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	// Every line this read completed is measured, not only the last: one
	// read can hold a whole over-long line and its newline.
	for i := 0; ; {
		nl := bytes.IndexByte(p[i:n], '\n')
		if nl < 0 {
			break
		}
		if end := g.n + int64(i+nl); end-g.start > int64(g.max) {
			g.err = tooLong(g.stream, g.line, int(g.start), g.max)
			return 0, g.err
		} else {
			g.line, g.start = g.line+1, end+1
		}
		i += nl + 1
	}
	g.n += int64(n)
	if g.n-g.start > int64(g.max) {
		g.err = tooLong(g.stream, g.line, int(g.start), g.max)
		return 0, g.err
	}
	return n, err
}

// crashTable prints the --crash-at all table a row at a time (JSON: one
// row a line), counting the verdicts for its last line.
type crashTable struct {
	w      *replayWriter
	rows   int
	counts map[string]int
}

func newCrashTable(w *replayWriter) *crashTable {
	if !w.json {
		w.printf("%-5s  %-40s  %-12s  %-38s  %s\n", "crash", "after event", "verdict", "target", "vetoed by")
	}
	return &crashTable{w: w, counts: map[string]int{}}
}

func (t *crashTable) row(r crashRow) {
	t.rows++
	if t.w.json {
		t.w.encode(r)
		return
	}
	verdict := r.Verdict
	if r.Error != "" {
		verdict = "error"
	}
	t.w.printf("%5d  %-40s  %-12s  %-38s  %s\n", r.At, r.Event, verdict, orDashStr(r.Target), strings.Join(r.Guards, ", "))
	t.counts[r.Verdict]++
}

func (t *crashTable) end(warnings []string) {
	if t.w.json {
		return
	}
	t.w.printf("\n%d crash points:", t.rows)
	for _, v := range []string{"none", "completed", "interrupted", "cancelled", "error", "unknown", "balanced", "unloadable"} {
		if t.counts[v] > 0 {
			t.w.printf(" %s %d", v, t.counts[v])
		}
	}
	t.w.printf("\n")
	for _, l := range warnings {
		t.w.printf("warning: %s\n", l)
	}
}
