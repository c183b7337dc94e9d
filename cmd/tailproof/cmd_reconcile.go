package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func init() {
	register(command{
		name:    "reconcile",
		summary: "decide a prompt left in_flight by a crash and append its terminal when the evidence proves it",
		run:     runReconcile,
	})
}

// sessionFlags are the input flags reconcile, status and replay share: two
// explicit files, or Qwen Code's runtime layout.
type sessionFlags struct {
	ledger, transcript    string
	runtime, cwd, session string
}

func (s *sessionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.ledger, "ledger", "", "the prompt terminal ledger (`FILE`)")
	fs.StringVar(&s.transcript, "transcript", "", "the session transcript (`FILE`)")
	fs.StringVar(&s.runtime, "qwen-runtime", "", "Qwen Code's runtime `DIR` (default: $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen)")
	fs.StringVar(&s.cwd, "cwd", "", "the session's `WORKSPACE` directory (with --session)")
	fs.StringVar(&s.session, "session", "", "the session `ID` in Qwen Code's layout")
}

// store opens the store the flags name and the session id to use with it.
func (s *sessionFlags) store() (adapters.Store, string, error) {
	switch {
	case s.ledger != "" || s.transcript != "":
		if s.ledger == "" || s.transcript == "" {
			return nil, "", errors.New("--ledger and --transcript go together")
		}
		if s.session != "" || s.cwd != "" || s.runtime != "" {
			return nil, "", errors.New("give either --ledger/--transcript or --cwd/--session, not both")
		}
		return jsonl.NewFilesStore(vfs.OS, s.ledger, s.transcript), "", nil
	case s.session != "":
		if s.cwd == "" {
			return nil, "", errors.New("--session needs --cwd (the workspace the session ran in)")
		}
		if err := jsonl.CheckSessionID(s.session); err != nil {
			return nil, "", err
		}
		dir := s.runtime
		if dir == "" {
			home, _ := os.UserHomeDir()
			d, err := jsonl.ResolveRuntimeDir(os.Getenv, home)
			if err != nil {
				return nil, "", err
			}
			dir = d
		}
		return jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(dir, s.cwd)), s.session, nil
	}
	return nil, "", errors.New("name the session: --ledger FILE --transcript FILE, or --cwd WORKSPACE --session ID [--qwen-runtime DIR]")
}

func runReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sf        sessionFlags
		dryRun    = fs.Bool("dry-run", false, "decide without appending")
		now       = fs.Int64("now", 0, "the clock in Unix `MS` for the appended record (default: the system clock)")
		asJSON    = fs.Bool("json", false, "print one JSON object")
		reference = fs.Bool("reference", false, "apply exactly Qwen Code 0.24.4's rules (no ownership evidence)")
		trace     = fs.Bool("trace", false, "print the folds and transitions that led to the decision")
	)
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tailproof reconcile (--ledger FILE --transcript FILE | --cwd WORKSPACE --session ID [--qwen-runtime DIR]) [--dry-run] [--now MS] [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	store, sid, err := sf.store()
	if err != nil {
		fmt.Fprintf(stderr, "tailproof reconcile: %v\n", err)
		return 2
	}
	clock := func() int64 { return time.Now().UnixMilli() }
	if *now != 0 {
		n := *now
		clock = func() int64 { return n }
	}
	res, err := tailproof.Reconcile(ctx, store, sid, tailproof.Options{Now: clock, DryRun: *dryRun, Reference: *reference})
	if err != nil {
		fmt.Fprintf(stderr, "tailproof reconcile: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "tailproof reconcile: %v\n", err)
			return 1
		}
		return 0
	}
	if len(res.Decisions) == 0 {
		fmt.Fprintf(stdout, "target:  (none)\nverdict: %s\n", tailproof.VerdictNone)
	}
	for _, d := range res.Decisions {
		fmt.Fprintf(stdout, "target:  %s\nverdict: %s\n", d.Target, d.Verdict)
		if d.Line != nil {
			verb := "appended"
			if *dryRun {
				verb = "would append"
			}
			fmt.Fprintf(stdout, "%s: %s\n", verb, d.Line)
		}
		for _, v := range d.Vetoes {
			fmt.Fprintf(stdout, "veto:    %s: %s\n", v.Guard, v.Reason)
		}
	}
	if *trace {
		fmt.Fprintln(stdout, "trace:")
		for _, l := range res.Trace {
			fmt.Fprintf(stdout, "  %s\n", l)
		}
	}
	return 0
}
