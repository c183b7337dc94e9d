// Command tailproof decides, from durable evidence only, what happened to an
// agent session whose process died. Run `tailproof help` for the commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// command is one subcommand. Each lives in its own cmd_<name>.go file and
// registers itself from init, so commands never share a file.
type command struct {
	name    string
	summary string
	// run gets the arguments after the command name and returns the exit code.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("tailproof: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	stopProfile := startCPUProfile(os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// tuneGC trades memory for speed in a short-lived command: a decision's live
// heap is a few MiB (the transcript is streamed), so collecting at 4× the live
// heap instead of 2× saves collections, while a 256 MiB soft limit keeps a
// pathological input from growing without bound. (8× measured no faster once
// the transcript is read in one pass, and put a 600 MB reconcile at 47 MiB
// peak RSS instead of 33.) The 4× is bounded to 20 MiB of garbage above the
// live heap (gcbound.go). GOGC and GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		boundGCHeadroom()
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		memLimitOwned.Store(true)
		debug.SetMemoryLimit(defaultMemLimit)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) == 2 && args[0] == "help" {
			if _, ok := commands[args[1]]; ok { // tailproof help reconcile = tailproof reconcile --help
				return run(ctx, []string{args[1], "--help"}, stdout, stderr)
			}
		}
		usage(stdout)
		return cli.OK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "tailproof: unknown command %q (see tailproof help)\n", args[0])
		return cli.Usage
	}
	// A panic is a bug, never a verdict: say so with its own exit code
	// rather than Go's 2, which would read as a usage error.
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "tailproof %s: internal error (a bug; please report it): %v\n%s", args[0], p, debug.Stack())
			code = cli.Internal
		}
	}()
	code = c.run(ctx, args[1:], stdout, stderr)
	if code != cli.OK && ctx.Err() != nil {
		return cli.Interrupted
	}
	return code
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tailproof <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %s%s  %s\n", n, strings.Repeat(" ", width-len(n)), commands[n].summary)
	}
	fmt.Fprintln(w, "\n`tailproof <command> --help` describes a command. Exit codes, the same in every command:")
	for _, c := range cli.Codes {
		fmt.Fprintf(w, "  %3d  %s\n", c.Code, c.Meaning)
	}
}
