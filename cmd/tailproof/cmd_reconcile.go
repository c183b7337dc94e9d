package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/guards"
)

func init() {
	register(command{
		name:    "reconcile",
		summary: "decide the prompts left in_flight by a crash and append each terminal the evidence proves",
		run:     runReconcile,
	})
}

func runReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, rest, done := routeHarness(ctx, args, stdout, stderr, runHarnessReconcile); done {
		return code
	} else {
		args = rest
	}
	return cli.Main(stderr, "reconcile", func() error {
		fs := cli.NewFlagSet("reconcile",
			"usage: tailproof reconcile [--harness qwen] (--transcript|--file FILE [--ledger FILE] | --cwd WORKSPACE --session ID [--qwen-runtime DIR]) [--dry-run] [--now MS] [--json] [--trace] [--reference]",
			"       tailproof reconcile --all [--qwen-runtime DIR] [--cwd WORKSPACE] [--workers N] [--lock-wait D] [--dry-run] [--now MS] [--json] [--reference]",
			"--all reconciles every active session of the runtime directory (of one workspace with --cwd) and exits 0 when every prompt",
			"in flight was decided, 1 when one stayed unknown, else the code of the first session that failed (ADR 0036).")
		var (
			sf        sessionFlags
			dryRun    = fs.Bool("dry-run", false, "decide without appending")
			now       = fs.Int64("now", 0, "the clock in Unix `MS` for the appended records (default: the system clock)")
			asJSON    = fs.Bool("json", false, "print one JSON object (the published decision shape, schemaVersion 1)")
			reference = fs.Bool("reference", false, "apply exactly Qwen Code 0.24.4's rules (no ownership evidence, one prompt per run)")
			trace     = fs.Bool("trace", false, "print the folds and transitions that led to the decisions")
			all       = fs.Bool("all", false, "reconcile every session of the runtime directory (with --cwd: of that workspace)")
			workers   = fs.Int("workers", runtime.GOMAXPROCS(0), "sessions reconciled at once (with --all)")
			lockWait  = fs.Duration("lock-wait", 5*time.Second, "how long a session waits for a ledger lock another process holds (with --all)")
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
		if *all || fs.Given("workers") || fs.Given("lock-wait") {
			return reconcileAllFlags(ctx, fs, sf, *all, *trace, *workers, *lockWait, *asJSON,
				tailproof.Options{Now: clock, DryRun: *dryRun, Reference: *reference, NoTrace: true}, source, stdout, stderr)
		}
		sess, err := sf.open()
		if err != nil {
			return err
		}
		defer sess.Close()
		// The input report's ledger counts come from the decision's own
		// read of the ledger (Options.LedgerReport), not a second read.
		input := cli.InputReport{Ledger: &sess.Ledger}
		opts := tailproof.Options{Now: clock, DryRun: *dryRun, Reference: *reference}
		var seen cli.LedgerCollector
		if sess.Ledger.Present {
			opts.LedgerReport = &seen
		}
		res, err := tailproof.Reconcile(ctx, sess.Store, sess.ID, opts)
		if err == nil && sess.Ledger.Present {
			var scanned cli.FileReport
			if scanned, err = seen.Report(); err == nil {
				scanned.Path = sess.Ledger.Path
				sess.Ledger = scanned
			}
		}
		if err != nil {
			// A ledger that cannot be read is an input error, a refused
			// clock a usage error (--now) or a refused write (the system
			// clock); the only other failure is an append (the message
			// says whether it was rolled back).
			err = cli.Clock(err, source, fs.Given("now"))
			return cli.WithCode(cli.Code(err, cli.Write), err)
		}
		input.Transcript = transcriptReport(ctx, sess, res, *reference)
		w := &cli.Printer{W: stdout}
		if *asJSON {
			extra := map[string]any{"input": input, "warnings": input.Warnings()}
			if *trace {
				extra["trace"] = res.Trace
			}
			b, err := withFields(res, extra, "input", "warnings", "trace")
			if err != nil {
				return err
			}
			w.Printf("%s\n", b)
			return w.Err()
		}
		if len(res.Decisions) == 0 {
			w.Printf("target:  (none)\nverdict: %s\n", tailproof.VerdictNone)
		}
		for _, d := range res.Decisions {
			w.Printf("target:  %s\nverdict: %s\n", d.Target, d.Verdict)
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
		}
		w.Tail(input.Warnings(), res.Trace, *trace)
		return w.Err()
	})
}

// withFields marshals the published shape of v and appends the CLI's own
// fields after it, in the order given (a key absent from extra is skipped),
// so the published keys keep their order and meaning.
func withFields(v any, extra map[string]any, order ...string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("}"))
	for _, k := range order {
		x, ok := extra[k]
		if !ok {
			continue
		}
		xb, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b = fmt.Appendf(b, ",%q:%s", k, xb)
	}
	return append(b, '}'), nil
}

// scanLedger reads the session's ledger once for the input report.
func scanLedger(ctx context.Context, sess *cli.Session) (cli.InputReport, error) {
	rep := cli.InputReport{Ledger: &sess.Ledger}
	if !sess.Ledger.Present {
		return rep, nil
	}
	rc, err := sess.OpenLedger(ctx)
	if err != nil {
		return rep, cli.WithCode(cli.Input, err)
	}
	defer rc.Close()
	scanned, err := cli.ScanLedger(rc)
	if err != nil {
		return rep, cli.WithCode(cli.Input, fmt.Errorf("ledger %s: %w", sess.Ledger.Path, err))
	}
	scanned.Path = sess.Ledger.Path
	sess.Ledger = scanned
	return rep, nil
}

// transcriptReport says what the transcript held. It costs nothing when the
// decisions read a clean transcript: it is scanned again (one pass, bounded
// memory) only when a decision saw trouble in it, or under --reference,
// whose rules skip undecodable lines without a word. The chain's facts are
// the same for every decision; the first that read the transcript has them.
func transcriptReport(ctx context.Context, sess *cli.Session, res tailproof.Result, reference bool) *cli.FileReport {
	rep := sess.Transcript
	var t guards.TranscriptEvidence
	for _, d := range res.Decisions {
		if d.Evidence != nil && (d.Evidence.Transcript.Loaded || d.Evidence.Transcript.LoadErr != "") {
			t = d.Evidence.Transcript
			break
		}
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
