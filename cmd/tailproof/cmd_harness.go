package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// The harness forms of status, reconcile and replay (issue #15, Deliver 7;
// ADR 0028): one contract for dsh, Codex CLI and Claude Code sessions over
// the harness-neutral core (tailproof.TurnStatus, ReconcileTurns,
// ReplayTurns). The Qwen forms stay in cmd_status.go, cmd_reconcile.go and
// cmd_replay.go; routeHarness sends --harness other than qwen here.

// schemaVersion is the version of every harness JSON document
// (docs/schemas/harness-*.schema.json).
const schemaVersion = 1

// damageJSON counts the lines that did not decode (a torn final fragment
// is not damage: it was never written whole).
type damageJSON struct {
	Lines int         `json:"lines"`
	First *damageLine `json:"first"`
}

type damageLine struct {
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	Class  string `json:"class"`
	Detail string `json:"detail"`
}

func damageOf(e *events.Error) *damageLine {
	if e == nil {
		return nil
	}
	class := "corrupt"
	switch {
	case errors.Is(e, events.ErrTornTail):
		class = "torn-tail"
	case errors.Is(e, events.ErrLineTooLong):
		class = "too-long"
	}
	return &damageLine{Line: e.Pos.Line, Offset: e.Pos.Offset, Class: class, Detail: e.Detail}
}

// harnessStatusJSON is `status --harness … --json`
// (docs/schemas/harness-status.schema.json).
type harnessStatusJSON struct {
	SchemaVersion int    `json:"schemaVersion"`
	Harness       string `json:"harness"`
	File          string `json:"file"`
	Sidecar       string `json:"sidecar"`
	Turns         int    `json:"turns"`
	// Turn is the last turn; null when the file holds none.
	Turn *tailproof.TurnSummary `json:"turn"`
	// WriterStopped: --writer-stopped was given and no live writer was
	// found; Writer is the evidence of a live writer, if any.
	WriterStopped bool       `json:"writerStopped"`
	Writer        *string    `json:"writer"`
	Damage        damageJSON `json:"damage"`
	Skipped       []string   `json:"skipped"`
}

const harnessSynopsis = "(--file PATH | --session ID [--cwd WORKSPACE] [--home DIR])"

func runHarnessStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "status", func() error {
		fs := cli.NewFlagSet("status", "usage: tailproof status --harness dsh|codex|claude "+harnessSynopsis+" [--writer-stopped] [--json] [--trace]")
		var hf harnessFlags
		hf.register(fs)
		stopped := fs.Bool("writer-stopped", false, "assert the harness's writer is gone, so a last turn without an end record can be decided (Claude Code's pid files still veto it)")
		asJSON := fs.Bool("json", false, "print one JSON object (schemaVersion 1)")
		trace := fs.Bool("trace", false, "print the machine's steps for the last turn")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		s, err := hf.open()
		if err != nil {
			return err
		}
		defer s.Close()
		out := harnessStatusJSON{SchemaVersion: schemaVersion, Harness: s.Name, File: s.Path, Skipped: nonNil(s.Skipped)}
		if *stopped {
			err := s.WriterLive(ctx)
			if cli.Code(err, cli.OK) == cli.Unavailable {
				msg := err.Error()
				out.Writer = &msg
			} else if err != nil {
				return err
			}
			out.WriterStopped = out.Writer == nil
		}
		var sidecar *harnessfs.Sidecar
		if s.Name != harnessDSH {
			sidecar = harnessfs.NewSidecar(s.fsys, s.Path)
			out.Sidecar = sidecar.Path()
		}
		o := tailproof.TurnStatusOptions{Harness: s.Harness, WriterStopped: out.WriterStopped}
		if sidecar != nil {
			o.Ledger = sidecar
		}
		rep, err := tailproof.TurnStatus(ctx, s.Open, o)
		if err != nil {
			return cli.WithCode(cli.Code(err, cli.Input), err)
		}
		out.Turns = rep.Turns
		out.Damage = damageJSON{Lines: rep.Damage, First: damageOf(rep.FirstDamage)}
		if rep.Last != nil {
			sum := tailproof.Summary(*rep.Last, rep.Stamp)
			out.Turn = &sum
		}
		w := &cli.Printer{W: stdout}
		if *asJSON {
			w.JSON(out)
			return w.Err()
		}
		w.Printf("harness: %s\nfile:    %s\nturns:   %d\n", out.Harness, out.File, out.Turns)
		if out.Turn == nil {
			w.Printf("turn:    (none)\n")
		} else {
			printTurn(w, *out.Turn)
		}
		if out.Writer != nil {
			w.Printf("writer:  %s\n", *out.Writer)
		}
		if out.Damage.Lines > 0 {
			d := out.Damage.First
			w.Printf("damage:  %d lines did not decode; the first: line %d (%s) %s\n", out.Damage.Lines, d.Line, d.Class, d.Detail)
		}
		for _, sk := range out.Skipped {
			w.Printf("skipped: %s\n", sk)
		}
		if *trace && rep.Last != nil {
			w.Printf("trace:\n")
			for _, st := range rep.Last.Trace {
				w.Printf("  %s\n", st.Describe())
			}
		}
		return w.Err()
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printTurn is a turn's text form, shared by status and replay.
func printTurn(w *cli.Printer, t tailproof.TurnSummary) {
	because := ""
	if t.Because != "" {
		because = " (" + t.Because + ")"
	}
	w.Printf("turn:    %s\nverdict: %s%s\nend:     %s", t.ID, t.Verdict, because, t.HarnessEnd)
	if t.EndReason != "" {
		w.Printf(" (%s)", t.EndReason)
	}
	w.Printf("\n")
	for _, v := range t.Vetoes {
		w.Printf("veto:    %s: %s\n", v.Guard, v.Reason)
	}
	for _, p := range t.Resend {
		w.Printf("resend:  line %d %q (%s)\n", p.Line, p.Text, p.Origin)
	}
	for _, v := range t.ResendVetoes {
		w.Printf("resend veto: %s: %s\n", v.Guard, v.Reason)
	}
	for _, c := range t.DanglingCalls {
		ran := "may or may not have run"
		if c.Ran {
			ran = "ran"
		}
		w.Printf("dangling: %s %s at line %d: %s\n", c.ID, c.Name, c.Line, ran)
	}
	if t.Stamp != nil {
		w.Printf("stamp:   %s %s %s at %d\n", t.Stamp.Terminal, t.Stamp.Code, t.Stamp.StopReason, t.Stamp.At)
	}
}

// harnessReconcileJSON is `reconcile --harness … --json`
// (docs/schemas/harness-reconcile.schema.json).
type harnessReconcileJSON struct {
	SchemaVersion  int         `json:"schemaVersion"`
	Harness        string      `json:"harness"`
	File           string      `json:"file"`
	Sidecar        string      `json:"sidecar"`
	DryRun         bool        `json:"dryRun"`
	Turns          int         `json:"turns"`
	Appended       []stampLine `json:"appended"`
	AlreadyStamped int         `json:"alreadyStamped"`
	Unknown        int         `json:"unknown"`
	Duplicate      []string    `json:"duplicate"`
	Damage         int         `json:"damage"`
	// Decisions (--trace) is every turn's decision, in file order.
	Decisions []tailproof.TurnSummary `json:"decisions,omitempty"`
}

type stampLine struct {
	Turn       string `json:"turn"`
	Terminal   string `json:"terminal"`
	Code       string `json:"code,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	At         int64  `json:"at"`
	Line       string `json:"line"`
}

func runHarnessReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "reconcile", func() error {
		fs := cli.NewFlagSet("reconcile", "usage: tailproof reconcile --harness codex|claude "+harnessSynopsis+" [--dry-run] [--now MS] [--json] [--trace]")
		var hf harnessFlags
		hf.register(fs)
		dryRun := fs.Bool("dry-run", false, "decide without appending")
		now := fs.Int64("now", 0, "the clock in Unix `MS` for the appended terminals (default: the system clock)")
		asJSON := fs.Bool("json", false, "print one JSON object (schemaVersion 1)")
		trace := fs.Bool("trace", false, "also print every turn's decision")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		at := time.Now().UnixMilli()
		if fs.Given("now") {
			if err := cli.UnixMillis("--now", *now); err != nil {
				return err
			}
			at = *now
		}
		if hf.name == harnessDSH {
			return cli.Usagef("dsh keeps its own terminals in its log: close a crashed dsh log with `tailproof repair --harness dsh --file PATH` (dsh's own load repair)")
		}
		s, err := hf.open()
		if err != nil {
			return err
		}
		defer s.Close()
		// The run's terminals are held compactly (tailproof.Stamps) and
		// appended in one durable append, all or nothing (ADR 0028), or —
		// under --dry-run — not at all.
		side := harnessfs.NewSidecar(s.fsys, s.Path)
		res, err := tailproof.ReconcileTurns(ctx, s.Open, side, tailproof.TurnReconcileOptions{
			Harness: s.Harness, Now: at, WriterLive: s.WriterLive, Collect: true})
		if err != nil {
			return cli.WithCode(cli.Code(err, cli.Input), err)
		}
		stamps := &res.Collected
		if !*dryRun && stamps.Len() > 0 {
			if err := side.AppendLedgerSeq(ctx, stamps.Lines()); err != nil {
				return cli.WithCode(cli.Write, fmt.Errorf("append %d terminals to %s: %w", stamps.Len(), side.Path(), err))
			}
		}
		out := harnessReconcileJSON{SchemaVersion: schemaVersion, Harness: s.Name, File: s.Path, Sidecar: side.Path(),
			DryRun: *dryRun, Turns: res.Turns, Appended: []stampLine{}, AlreadyStamped: res.AlreadyStamped,
			Unknown: res.Unknown, Duplicate: nonNil(res.Duplicate), Damage: res.Damage}
		if *trace {
			out.Decisions = []tailproof.TurnSummary{}
			err := tailproof.ReplayTurns(ctx, s.Open, s.Harness, true, func(st tailproof.TurnStep) error {
				for _, d := range st.Decided {
					out.Decisions = append(out.Decisions, tailproof.Summary(d, nil))
				}
				return nil
			})
			if err != nil {
				return cli.WithCode(cli.Code(err, cli.Input), err)
			}
		}
		bw := bufio.NewWriter(stdout)
		w := &cli.Printer{W: bw}
		if *asJSON {
			if err := writeReconcileJSON(bw, out, stamps); err != nil {
				return err
			}
			return flushOutput(bw)
		}
		verb := "appended"
		if *dryRun {
			verb = "would append"
		}
		w.Printf("harness: %s\nfile:    %s\nsidecar: %s\nturns:   %d (already stamped %d, unknown %d)\n",
			out.Harness, out.File, out.Sidecar, out.Turns, out.AlreadyStamped, out.Unknown)
		for line := range stamps.Lines() {
			w.Printf("%s: %s\n", verb, line)
		}
		if stamps.Len() == 0 {
			w.Printf("%s: nothing\n", verb)
		}
		for _, d := range out.Duplicate {
			w.Printf("duplicate turn id: %s (only its first occurrence is stamped)\n", d)
		}
		if out.Damage > 0 {
			w.Printf("damage:  %d lines did not decode\n", out.Damage)
		}
		for _, d := range out.Decisions {
			w.Printf("decision: %s %s %s\n", d.ID, d.Verdict, d.Because)
			for _, v := range d.Vetoes {
				w.Printf("  veto: %s: %s\n", v.Guard, v.Reason)
			}
		}
		if err := w.Err(); err != nil {
			return err
		}
		return flushOutput(bw)
	})
}

// harnessReplayStep is one line of `replay --harness … --json`, a JSON
// Lines stream (docs/schemas/harness-replay.schema.json): a step per line
// of the session file, then one with final true.
type harnessReplayStep struct {
	SchemaVersion int                     `json:"schemaVersion"`
	Line          int                     `json:"line"`
	Offset        int64                   `json:"offset"`
	Record        string                  `json:"record,omitempty"`
	Acts          []string                `json:"acts"`
	Damage        *damageLine             `json:"damage,omitempty"`
	Decided       []tailproof.TurnSummary `json:"decided"`
	Final         bool                    `json:"final"`
}

func runHarnessReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "replay", func() error {
		fs := cli.NewFlagSet("replay", "usage: tailproof replay --harness dsh|codex|claude "+harnessSynopsis+" [--writer-stopped] [--json]")
		var hf harnessFlags
		hf.register(fs)
		stopped := fs.Bool("writer-stopped", false, "assert the writer is gone, so the last turn can be decided without its end record")
		asJSON := fs.Bool("json", false, "print JSON Lines: one object per step (schemaVersion 1)")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		s, err := hf.open()
		if err != nil {
			return err
		}
		defer s.Close()
		writerStopped := *stopped
		if writerStopped {
			if err := s.WriterLive(ctx); err != nil {
				return err
			}
		}
		w := &cli.Printer{W: stdout}
		err = tailproof.ReplayTurns(ctx, s.Open, s.Harness, writerStopped, func(st tailproof.TurnStep) error {
			step := harnessReplayStep{SchemaVersion: schemaVersion, Line: st.Pos.Line, Offset: st.Pos.Offset,
				Acts: []string{}, Damage: damageOf(st.Damage), Decided: []tailproof.TurnSummary{}, Final: st.Final}
			if st.Record != nil {
				step.Record = st.Record.Describe()
			}
			for _, a := range st.Acts {
				step.Acts = append(step.Acts, a.Describe())
			}
			for _, d := range st.Decided {
				step.Decided = append(step.Decided, tailproof.Summary(d, nil))
			}
			if *asJSON {
				w.JSON(step)
				return w.Err()
			}
			printStep(w, step, st.Decided)
			return w.Err()
		})
		if err != nil {
			if w.Err() != nil {
				return w.Err()
			}
			return cli.WithCode(cli.Code(err, cli.Input), err)
		}
		return nil
	})
}

func printStep(w *cli.Printer, st harnessReplayStep, ds []turnverdict.Decision) {
	if st.Final {
		w.Printf("end of file\n")
	}
	if st.Damage != nil {
		w.Printf("line %d: %s: %s\n", st.Line, st.Damage.Class, st.Damage.Detail)
	} else if !st.Final {
		for _, a := range st.Acts {
			w.Printf("line %s\n", a)
		}
		if len(st.Acts) == 0 {
			w.Printf("line %d: %s (no act)\n", st.Line, st.Record)
		}
	}
	for i, d := range st.Decided {
		w.Printf("  decided turn %s: %s", d.ID, d.Verdict)
		if d.Because != "" {
			w.Printf(" (%s)", d.Because)
		}
		w.Printf(", lines %d-%d\n", ds[i].Start.Line, ds[i].Last.Line)
		for _, v := range d.Vetoes {
			w.Printf("    veto: %s: %s\n", v.Guard, v.Reason)
		}
	}
}
