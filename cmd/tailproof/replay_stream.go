package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/projections/timeline"
)

// replayStreaming replays the Qwen session the flags name without holding
// its transcript, when it is a clean linear session (openStream): the steps
// are printed as the events are read, the decision is the one pass's
// (tailproof.Cuts) at the decision point. It returns errNotStreamable,
// having printed nothing, for any other session.
func replayStreaming(ctx context.Context, f replayFlags, stdout, stderr io.Writer) error {
	sess, err := f.sf.open()
	if err != nil {
		return errNotStreamable // the general path reports it
	}
	defer sess.Close()
	name := sess.ID
	if name == "" {
		name = f.sf.transcript
	}
	if f.crashAt == "all" {
		var bar *cli.Progress
		made := false
		rows, warnings, page, err := streamCrashRows(ctx, sess.Store, sess.ID, f, func(total, done int) {
			if !made {
				bar, made = cli.NewProgress(stderr, "crash points", total), true
			}
			bar.Set(done, "")
		})
		bar.Done()
		if err != nil {
			return err
		}
		w := &replayWriter{w: stdout, json: f.asJSON}
		printCrashTable(w, rows, warnings)
		if page != nil {
			page.name = name
			if err := writeReplayHTML(f.html, *page); err != nil {
				return err
			}
		}
		if w.err != nil {
			return cli.WithCode(cli.Write, w.err)
		}
		return nil
	}
	src, total, err := openStream(ctx, sess.Store, sess.ID, tailproof.Options{DryRun: true, Reference: f.reference}, f.now, true, true)
	if err != nil {
		return err
	}
	defer src.close()
	if f.html != "" {
		src.page = timeline.New()
	}
	stop, decideAt, crash, err := replayRange(f, total)
	if err != nil {
		return err
	}
	w := &replayWriter{w: stdout, json: f.asJSON}
	st := newStepper(&session{exists: [2]bool{true, true}, ev: &timeline.Evidence{}})
	st.inc.rewalk, st.forget = src.rewalk, true
	st.inc.tree, st.inc.slot = src.tree, src.tree.follow(st.inc)
	bar := cli.NewProgress(stderr, "replay", stop)
	for n := range decideAt {
		e, ok, err := src.take()
		if err == nil && !ok {
			err = errNotStreamable
		}
		if err == nil && n < stop {
			w.step(st.nextOf(e), total)
			bar.Set(n+1, "")
			if st.inc == nil || st.inc.err != nil {
				err = errors.Join(errNotStreamable, st.inc.errOrNil())
			}
		}
		if err != nil {
			bar.Done()
			// Checked before the first step: only a file changed under the
			// replay gets here, after steps were printed.
			return cli.WithCode(cli.Input, fmt.Errorf("the transcript changed while it was replayed (step %d): %w", n+1, err))
		}
		if e.Time.OK && e.Time.Ms > src.last {
			src.last = e.Time.Ms
		}
	}
	bar.Done()
	if err := src.fill(); err != nil { // where the cut ends (decide)
		return cli.WithCode(cli.Input, fmt.Errorf("the transcript changed while it was replayed (after step %d): %w", decideAt, err))
	}
	out := src.outcome(decideAt)
	w.outcome(out, total, crash, src.warnings(f))
	if src.page != nil {
		if err := src.pageTo(f.html, name, out, total, crash, decideAt); err != nil {
			return err
		}
	}
	if w.err != nil {
		return cli.WithCode(cli.Write, w.err)
	}
	if f.now != 0 && errors.Is(out.err, tailproof.ErrInvalidClock) {
		return cli.Clock(out.err, "--now", true)
	}
	return nil
}

func (in *incremental) errOrNil() error {
	if in == nil {
		return nil
	}
	return in.err
}

// outcome is decide's outcome at crash point n, the events so far taken.
func (s *streamState) outcome(n int) outcome {
	out, mem := newOutcome(n)
	if out.Error != "" {
		return out
	}
	if res, ok, err := s.decide(); ok {
		return outcomeOf(res, err, s.reference, out)
	}
	return decideQwenCut(s.ctx, mem, [2][]byte{s.ldata[:s.lsize], nil}, [2]bool{true, true}, s.reference, clockOr(s.now, s.last), out)
}

// pageTo writes the --html page: the events after the decision point are
// taken too (the page shows them all), the decision is out's.
func (s *streamState) pageTo(path, name string, out outcome, total int, crash bool, decideAt int) error {
	for {
		_, ok, err := s.take()
		if err != nil {
			return cli.WithCode(cli.Input, fmt.Errorf("the transcript changed while it was replayed: %w", err))
		}
		if !ok {
			break
		}
	}
	crashAt := -1
	if crash {
		crashAt = decideAt
	}
	return writeReplayHTML(path, replayPageOf{name: name, events: total, items: s.page.Items(), out: out, crashAt: crashAt})
}
