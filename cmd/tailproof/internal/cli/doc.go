// Package cli is the contract every tailproof command keeps with the
// programs that call it (ADR 0021): one table of exit codes, errors that
// name the flag or file at fault, usage that --help prints to stdout with
// exit 0, flag values checked before anything is read, the input files
// opened under one policy (regular files only, never through a symbolic
// link out of the directories the user named: ADR 0022), a report of what
// each input held that the default output and --json both carry, and a
// progress line on stderr only when stderr is a terminal.
//
// A command body returns an error; Main turns it into the message and the
// exit code:
//
//	func runX(ctx context.Context, args []string, stdout, stderr io.Writer) int {
//		return cli.Main(stderr, "x", func() error {
//			fs := cli.NewFlagSet("x", "usage: tailproof x [--runs N]")
//			runs := fs.Int("runs", 10, "how many")
//			if err := fs.Parse(args, stdout); err != nil {
//				return err // --help: exit 0; a bad flag: exit 2, naming it
//			}
//			if err := cli.AtLeast("--runs", *runs, 1); err != nil {
//				return err
//			}
//			...
//		})
//	}
package cli
