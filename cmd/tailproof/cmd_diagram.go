package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
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
	return cli.Main(stderr, "diagram", func() error {
		var names []string
		for _, m := range diagramMachines() {
			names = append(names, m.name)
		}
		fs := cli.NewFlagSet("diagram", fmt.Sprintf("usage: tailproof diagram [%s] [--dot]", strings.Join(names, "|")))
		fs.Positional = "MACHINE"
		dot := fs.Bool("dot", false, "Graphviz dot instead of Mermaid")
		// The machine name may come before or after --dot.
		var want []string
		for {
			if err := fs.Parse(args, stdout); err != nil {
				return err
			}
			if fs.NArg() == 0 {
				break
			}
			want = append(want, fs.Arg(0))
			args = fs.Args()[1:]
		}
		if len(want) > 1 {
			return cli.Usagef("name one machine, or none for all")
		}
		w := &cli.Printer{W: stdout}
		printed := 0
		for _, m := range diagramMachines() {
			if len(want) == 1 && want[0] != m.name {
				continue
			}
			if len(want) == 0 && printed > 0 {
				w.Printf("\n")
			}
			out := m.table.Mermaid()
			comment := "%% "
			if *dot {
				out, comment = m.table.Dot(), "// "
			}
			if len(want) == 0 {
				w.Printf("%s%s\n", comment, m.name)
			}
			w.Printf("%s", out)
			printed++
		}
		if printed == 0 {
			return cli.Usagef("unknown machine %q (one of %s)", want[0], strings.Join(names, ", "))
		}
		return w.Err()
	})
}
