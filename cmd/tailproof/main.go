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
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// tuneGC trades memory for speed in a short-lived command: a decision's live
// heap is a few MiB (the transcript is streamed), so collecting at 4× the live
// heap instead of 2× saves collections, while a 256 MiB soft limit keeps a
// pathological input from growing without bound. (8× measured no faster once
// the transcript is read in one pass, and put a 600 MB reconcile at 47 MiB
// peak RSS instead of 33.) GOGC and GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "tailproof: unknown command %q (see tailproof help)\n", args[0])
		return 2
	}
	return c.run(ctx, args[1:], stdout, stderr)
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
}
