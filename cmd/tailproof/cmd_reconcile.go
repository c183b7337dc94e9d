package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/guards"
)

func init() {
	register(command{
		name:    "reconcile",
		summary: "decide a prompt left in_flight by a crash and append its terminal when the evidence proves it",
		run:     runReconcile,
	})
}

type vetoJSON struct {
	Guard  string `json:"guard"`
	Reason string `json:"reason"`
}

type reconcileJSON struct {
	Target  *string `json:"target"`
	Verdict string  `json:"verdict"`
	// Appended is the record written to the ledger, null when none was;
	// with --dry-run it is always null and WouldAppend holds the record.
	Appended    json.RawMessage `json:"appended"`
	DryRun      bool            `json:"dryRun"`
	WouldAppend json.RawMessage `json:"wouldAppend,omitempty"`
	Vetoes      []vetoJSON      `json:"vetoes"`
	// Input says what the ledger and transcript held; Warnings says it in
	// words (undecodable lines, an absent ledger).
	Input    cli.InputReport `json:"input"`
	Warnings []string        `json:"warnings"`
	Trace    []string        `json:"trace,omitempty"`
}

func decisionJSON(d tailproof.Decision, dryRun bool) reconcileJSON {
	out := reconcileJSON{Verdict: string(d.Verdict), Appended: json.RawMessage("null"), DryRun: dryRun, Vetoes: []vetoJSON{}}
	if d.Target != "" {
		t := d.Target
		out.Target = &t
	}
	if d.Line != nil {
		if dryRun {
			out.WouldAppend = json.RawMessage(d.Line)
		} else {
			out.Appended = json.RawMessage(d.Line)
		}
	}
	for _, v := range d.Vetoes {
		out.Vetoes = append(out.Vetoes, vetoJSON{Guard: v.Guard, Reason: v.Reason})
	}
	return out
}

func runReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "reconcile", func() error {
		fs := cli.NewFlagSet("reconcile",
			"usage: tailproof reconcile (--ledger FILE --transcript FILE | --cwd WORKSPACE --session ID [--qwen-runtime DIR]) [--dry-run] [--now MS] [--json] [--trace] [--reference]")
		var (
			sf        sessionFlags
			dryRun    = fs.Bool("dry-run", false, "decide without appending")
			now       = fs.Int64("now", 0, "the clock in Unix `MS` for the appended record (default: the system clock)")
			asJSON    = fs.Bool("json", false, "print one JSON object")
			reference = fs.Bool("reference", false, "apply exactly Qwen Code 0.24.4's rules (no ownership evidence)")
			trace     = fs.Bool("trace", false, "print the folds and transitions that led to the decision")
		)
		sf.register(fs)
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		clock, source := func() int64 { return time.Now().UnixMilli() }, "the system clock"
		if fs.Given("now") {
			if err := cli.UnixMillis("--now", *now); err != nil {
				return err
			}
			n := *now
			clock, source = func() int64 { return n }, "--now"
		}
		sess, err := sf.open(false)
		if err != nil {
			return err
		}
		defer sess.Close()
		input, admitted, err := scanLedger(ctx, sess)
		if err != nil {
			return err
		}
		store := cli.ClockChecked{Store: sess.Store, Admitted: admitted, Source: source, Flag: fs.Given("now")}
		d, err := tailproof.Reconcile(ctx, store, sess.ID, tailproof.Options{Now: clock, DryRun: *dryRun, Reference: *reference})
		if err != nil {
			// A ledger that cannot be read is an input error; the only other
			// failure is the append (the message says whether it was rolled
			// back).
			return cli.WithCode(cli.Code(err, cli.Write), err)
		}
		if *dryRun && d.Line != nil {
			if err := store.Check(d.Line); err != nil {
				return err
			}
		}
		input.Transcript = transcriptReport(ctx, sess, d, *reference)
		w := &cli.Printer{W: stdout}
		if *asJSON {
			out := decisionJSON(d, *dryRun)
			out.Input, out.Warnings = input, input.Warnings()
			if *trace {
				out.Trace = d.Trace
			}
			w.JSON(out)
			return w.Err()
		}
		target := d.Target
		if target == "" {
			target = "(none)"
		}
		w.Printf("target:  %s\nverdict: %s\n", target, d.Verdict)
		if d.Line != nil {
			verb := "appended"
			if *dryRun {
				verb = "would append"
			}
			w.Printf("%s: %s\n", verb, d.Line)
		}
		for _, v := range d.Vetoes {
			w.Printf("veto:    %s: %s\n", v.Guard, v.Reason)
		}
		w.Tail(input.Warnings(), d.Trace, *trace)
		return w.Err()
	})
}

// scanLedger reads the session's ledger once for the input report and each
// prompt's admission time (which --now must not precede).
func scanLedger(ctx context.Context, sess *cli.Session) (cli.InputReport, map[string]float64, error) {
	rep := cli.InputReport{Ledger: &sess.Ledger}
	if !sess.Ledger.Present {
		return rep, nil, nil
	}
	rc, err := sess.OpenLedger(ctx)
	if err != nil {
		return rep, nil, cli.WithCode(cli.Input, err)
	}
	defer rc.Close()
	scanned, admitted, err := cli.ScanLedger(rc)
	if err != nil {
		return rep, nil, cli.WithCode(cli.Input, fmt.Errorf("ledger %s: %w", sess.Ledger.Path, err))
	}
	scanned.Path = sess.Ledger.Path
	sess.Ledger = scanned
	return rep, admitted, nil
}

// transcriptReport says what the transcript held. It costs nothing when the
// decision read a clean transcript: it is scanned again (one pass, bounded
// memory) only when the decision saw trouble in it, or under --reference,
// whose rules skip undecodable lines without a word.
func transcriptReport(ctx context.Context, sess *cli.Session, d tailproof.Decision, reference bool) *cli.FileReport {
	rep := sess.Transcript
	var t guards.TranscriptEvidence
	if d.Evidence != nil {
		t = d.Evidence.Transcript
	}
	switch {
	case !rep.Present:
	case !t.Loaded && t.LoadErr == "":
		rep.Note = "no prompt needed it (nothing in flight, or a guard refused first)"
	case reference || t.LoadErr != "" || len(t.BadLines) > 0 || t.TornTail || t.Degraded != "":
		scanned, err := cli.ScanTranscript(sess.OpenTranscript(ctx), 0)
		if err != nil {
			rep.Checked, rep.Note = true, "unreadable: "+err.Error()
			break
		}
		scanned.Path = rep.Path
		rep = scanned
	default:
		rep.Checked, rep.First = true, []cli.Position{}
	}
	return &rep
}
