package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// allFlags are reconcile --all's settings, checked by runReconcile.
type allFlags struct {
	runtime, cwd string
	workers      int
	lockWait     time.Duration
	asJSON       bool
	opts         tailproof.Options
	// clockSource names the clock, clockGiven says it came from --now
	// (cli.Clock classifies a refused clock by it).
	clockSource string
	clockGiven  bool
}

// The outcome of one session in reconcile --all.
const (
	outcomeDecided = "decided" // every dangling prompt got a verdict
	outcomeUnknown = "unknown" // at least one prompt stays in flight: the evidence cannot prove it
	outcomeNone    = "none"    // nothing was in flight
	outcomeFailed  = "failed"  // the session could not be reconciled (error says why)
)

type allError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type allSession struct {
	Project string          `json:"project"`
	Session string          `json:"session"`
	Outcome string          `json:"outcome"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *allError       `json:"error,omitempty"`
	// Warnings name the ledger's undecodable lines (reconcile --session
	// prints the same); they do not change the outcome or the exit code.
	Warnings []string `json:"warnings,omitempty"`

	decisions []decisionBrief // for the text report
}

type allTotals struct {
	Sessions int            `json:"sessions"`
	Outcomes map[string]int `json:"outcomes"`
	Dangling int            `json:"danglingPrompts"`
	Verdicts map[string]int `json:"verdicts"`
	// Appended counts the terminals appended (with --dry-run: that would
	// have been).
	Appended int `json:"appended"`
}

type allDoc struct {
	Runtime   string       `json:"runtime"`
	Workspace string       `json:"workspace"`
	Rules     string       `json:"rules"`
	DryRun    bool         `json:"dryRun"`
	Workers   int          `json:"workers"`
	Sessions  []allSession `json:"sessions"`
	Totals    allTotals    `json:"totals"`
	// ExitCode is the code the command exits with (ADR 0036).
	ExitCode int `json:"exitCode"`
	// Seconds is the wall time of the reconciling, SessionsPerSecond the
	// sessions per second of it (all workers together).
	Seconds           float64 `json:"seconds"`
	SessionsPerSecond float64 `json:"sessionsPerSecond"`
}

// runReconcileAll reconciles every session of the runtime directory (or of
// one workspace) on bounded workers and reports each. One session's failure
// never stops the others; the exit code is the first failed session's
// code, else 1 when a prompt stayed unknown, else 0 (ADR 0036).
func runReconcileAll(ctx context.Context, f allFlags, stdout, stderr io.Writer) error {
	dir, err := cli.RuntimeDir(f.runtime)
	if err != nil {
		return err
	}
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return cli.Inputf("the Qwen runtime directory %s does not exist (--qwen-runtime, else $QWEN_RUNTIME_DIR, $QWEN_HOME or ~/.qwen)", dir)
	case err != nil:
		return cli.WithCode(cli.Input, fmt.Errorf("the Qwen runtime directory: %w", err))
	case !st.IsDir():
		return cli.Inputf("the Qwen runtime directory %s is %s, not a directory", dir, vfs.Describe(st.Mode()))
	}
	rooted, err := vfs.Within(dir)
	if err != nil {
		return cli.WithCode(cli.Input, fmt.Errorf("the Qwen runtime directory: %w", err))
	}
	defer rooted.Close()
	doc, err := reconcileAll(ctx, lockWaitFS{FS: rooted, wait: f.lockWait}, dir, f, stderr)
	if err != nil {
		return err
	}
	if bar := cli.IsTerminal(stderr); bar { // the rate on a terminal only: the text report stays reproducible
		fmt.Fprintf(stderr, "%d sessions in %.2f s: %.0f sessions per second on %d workers\n", doc.Totals.Sessions, doc.Seconds, doc.SessionsPerSecond, doc.Workers)
	}
	if f.asJSON {
		if err := writeAllJSON(stdout, doc); err != nil {
			return err
		}
	} else {
		w := &cli.Printer{W: stdout}
		printAll(w, doc)
		if err := w.Err(); err != nil {
			return cli.WithCode(cli.Write, err)
		}
	}
	return cli.Exit(doc.ExitCode)
}

// reconcileAll is the command without its output: find the sessions under
// dir through fsys, reconcile each, and sum up.
func reconcileAll(ctx context.Context, fsys vfs.FS, dir string, f allFlags, stderr io.Writer) (allDoc, error) {
	found, err := findSessions(fsys, dir, f.cwd)
	if err != nil {
		return allDoc{}, err
	}
	bar := cli.NewProgress(stderr, "sessions", len(found))
	outs := make([]sessionOutcome, len(found))
	ran := make([]bool, len(found))
	start := time.Now()
	forEach(ctx, len(found), f.workers, func(i int) {
		outs[i] = reconcileSession(ctx, fsys, dir, found[i], f.opts)
	}, func(done, i int) {
		ran[i] = true
		bar.Set(done, found[i].id)
	})
	bar.Done()
	elapsed := time.Since(start).Seconds()
	if ctx.Err() != nil {
		n := 0
		for _, r := range ran {
			if r {
				n++
			}
		}
		return allDoc{}, cli.WithCode(cli.Interrupted, fmt.Errorf("interrupted after %d of %d sessions: every terminal appended is durable; run it again to reconcile the rest", n, len(found)))
	}
	doc := allDoc{Runtime: dir, Workspace: f.cwd, Rules: rulesName(f.opts), DryRun: f.opts.DryRun, Workers: max(1, min(f.workers, len(found))),
		Sessions: make([]allSession, 0, len(found)),
		Totals:   allTotals{Outcomes: map[string]int{}, Verdicts: map[string]int{}}, Seconds: elapsed}
	for i, o := range outs {
		doc.add(found[i], o, f)
	}
	if elapsed > 0 {
		doc.SessionsPerSecond = float64(len(found)) / elapsed
	}
	return doc, nil
}

func rulesName(o tailproof.Options) string {
	if o.Reference {
		return "qwen-0.24.4"
	}
	return "tailproof"
}

// add records one session's outcome and moves the exit code: the first
// failure (in session order, so the code does not depend on the workers)
// wins, else an unknown verdict makes it 1.
func (d *allDoc) add(s foundSession, o sessionOutcome, f allFlags) {
	as := allSession{Project: s.project, Session: s.id, Result: o.doc, Outcome: outcomeNone, Warnings: o.warnings, decisions: o.decisions}
	d.Totals.Dangling += o.dangling
	for _, dec := range o.decisions {
		d.Totals.Verdicts[dec.verdict]++
		if dec.line {
			d.Totals.Appended++
		}
		if dec.verdict == string(tailproof.VerdictUnknown) {
			as.Outcome = outcomeUnknown
		} else if as.Outcome == outcomeNone {
			as.Outcome = outcomeDecided
		}
	}
	if o.err != nil {
		err := o.err
		if errors.Is(err, errBusy) {
			err = cli.WithCode(cli.Unavailable, fmt.Errorf("%w; nothing more was appended to it: run again once that process is gone", err))
		}
		err = cli.Clock(err, f.clockSource, f.clockGiven)
		as.Outcome = outcomeFailed
		as.Error = &allError{Code: cli.Code(err, cli.Write), Message: err.Error()}
		if d.ExitCode == cli.OK || d.ExitCode == cli.CheckFailed {
			d.ExitCode = as.Error.Code
		}
	}
	if as.Outcome == outcomeUnknown && d.ExitCode == cli.OK {
		d.ExitCode = cli.CheckFailed
	}
	d.Totals.Sessions++
	d.Totals.Outcomes[as.Outcome]++
	d.Sessions = append(d.Sessions, as)
}

// printAll prints a line for each session that had something in flight or
// failed, then the totals.
func printAll(w *cli.Printer, d allDoc) {
	verb := "appended"
	if d.DryRun {
		verb = "would append"
	}
	for _, s := range d.Sessions {
		if s.Outcome == outcomeNone && len(s.Warnings) == 0 {
			continue
		}
		name := quoteOdd(s.Project)
		if s.Session != "" {
			name += "/" + quoteOdd(s.Session)
		}
		w.Printf("%s: %s\n", name, s.Outcome)
		for _, dec := range s.decisions {
			w.Printf("  %s: %s", dec.target, dec.verdict)
			if dec.line {
				w.Printf(" (%s)", verb)
			}
			for _, v := range dec.vetoes {
				w.Printf("; veto %s: %s", v.Guard, v.Reason)
			}
			w.Printf("\n")
		}
		if s.Error != nil {
			w.Printf("  error (exit %d): %s\n", s.Error.Code, quoteControl(s.Error.Message))
		}
		for _, warn := range s.Warnings {
			w.Printf("  warning: %s\n", quoteControl(warn))
		}
	}
	t := d.Totals
	w.Printf("sessions: %d (decided %d, unknown %d, none %d, failed %d)\n", t.Sessions,
		t.Outcomes[outcomeDecided], t.Outcomes[outcomeUnknown], t.Outcomes[outcomeNone], t.Outcomes[outcomeFailed])
	var verdicts []string
	for _, k := range sortedKeys(t.Verdicts) {
		verdicts = append(verdicts, fmt.Sprintf("%s %d", k, t.Verdicts[k]))
	}
	w.Printf("dangling prompts: %d", t.Dangling)
	if len(verdicts) > 0 {
		w.Printf(" (%s)", strings.Join(verdicts, ", "))
	}
	w.Printf("; %s: %d\n", verb, t.Appended)
}

// quoteOdd quotes a name holding anything but printable characters, so that
// a hostile file name cannot forge report lines.
func quoteOdd(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

// reconcileAllFlags checks the flags that go with --all and runs it.
func reconcileAllFlags(ctx context.Context, fs *cli.FlagSet, sf sessionFlags, all, trace bool, workers int, lockWait time.Duration, asJSON bool,
	opts tailproof.Options, source string, stdout, stderr io.Writer) error {
	switch {
	case !all:
		return cli.Usagef("--workers and --lock-wait go with --all")
	case sf.explicit() || sf.session != "":
		return cli.Usagef("--all reconciles every session: give no --ledger, --transcript or --session")
	case trace:
		return cli.Usagef("--all prints no trace: reconcile one session with --session ID --trace")
	case lockWait < 0:
		return cli.Usagef("--lock-wait must not be negative, got %s", lockWait)
	}
	if err := cli.AtLeast("--workers", workers, 1); err != nil {
		return err
	}
	return runReconcileAll(ctx, allFlags{runtime: sf.runtime, cwd: sf.cwd, workers: workers, lockWait: lockWait, asJSON: asJSON,
		opts: opts, clockSource: source, clockGiven: fs.Given("now")}, stdout, stderr)
}

// quoteControl quotes a message only when it holds a control character (a
// hostile name inside a path), so that ordinary messages stay readable.
func quoteControl(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// writeAllJSON writes the document as cli.WriteDoc would, but one session
// at a time: the report of 10,000 sessions is megabytes, and marshalling it
// whole held it twice more.
func writeAllJSON(w io.Writer, d allDoc) error {
	sessions := d.Sessions
	d.Sessions = nil
	head, err := cli.MarshalDoc(d, false)
	if err != nil {
		return cli.WithCode(cli.Internal, fmt.Errorf("encode output: %w", err))
	}
	// Strings are escaped in JSON, so the member can occur only as itself.
	before, after, ok := bytes.Cut(head, []byte(`"sessions":null`))
	if !ok {
		return cli.WithCode(cli.Internal, errors.New("encode output: no sessions member"))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // HTML characters unescaped, as MarshalDoc writes them
	enc.SetEscapeHTML(false)
	bw.Write(before)
	bw.WriteString(`"sessions":[`)
	for i := range sessions {
		if i > 0 {
			bw.WriteByte(',')
		}
		buf.Reset()
		if err := enc.Encode(&sessions[i]); err != nil {
			return cli.WithCode(cli.Internal, fmt.Errorf("encode output: %w", err))
		}
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	bw.WriteByte(']')
	bw.Write(after)
	bw.WriteByte('\n')
	if err := bw.Flush(); err != nil {
		return cli.WithCode(cli.Write, fmt.Errorf("write output: %w", err))
	}
	return nil
}
