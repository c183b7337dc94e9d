package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/machines/reconcile"
)

func init() {
	register(command{
		name:    "diagram",
		summary: "print a state machine's transition table as Mermaid (default) or Graphviz dot",
		run:     runDiagram,
	})
}

// diagramMachines are the machines tailproof decides with, by the names the
// CLI accepts, in the order `diagram` with no name prints them.
func diagramMachines() []struct {
	name  string
	table machines.Table
} {
	return []struct {
		name  string
		table machines.Table
	}{
		{"reconcile", reconcile.Table},
		{"prompt-lifecycle", machines.LifecycleTable},
		{"repair-episode", machines.RepairEpisodeTable},
		{"admission", machines.AdmissionTable()},
	}
}

func runDiagram(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diagram", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dot := fs.Bool("dot", false, "Graphviz dot instead of Mermaid")
	var names []string
	for _, m := range diagramMachines() {
		names = append(names, m.name)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: tailproof diagram [%s] [--dot]\n", strings.Join(names, "|"))
		fs.PrintDefaults()
	}
	// The machine name may come before or after --dot.
	var want []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		want = append(want, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(want) > 1 {
		fmt.Fprintln(stderr, "tailproof diagram: name one machine, or none for all")
		return 2
	}
	printed := 0
	for _, m := range diagramMachines() {
		if len(want) == 1 && want[0] != m.name {
			continue
		}
		if len(want) == 0 && printed > 0 {
			fmt.Fprintln(stdout)
		}
		out := m.table.Mermaid()
		comment := "%% "
		if *dot {
			out, comment = m.table.Dot(), "// "
		}
		if len(want) == 0 {
			fmt.Fprintf(stdout, "%s%s\n", comment, m.name)
		}
		fmt.Fprint(stdout, out)
		printed++
	}
	if printed == 0 {
		fmt.Fprintf(stderr, "tailproof diagram: unknown machine %q (one of %s)\n", want[0], strings.Join(names, ", "))
		return 2
	}
	return 0
}
