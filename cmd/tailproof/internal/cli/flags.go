package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// FlagSet is a flag.FlagSet that keeps the CLI's usage contract: --help and
// -h print the usage on stdout and exit 0; any other parse error is one line
// on stderr naming the flag (exit 2) and a pointer to --help, never the
// whole usage; positional arguments are refused unless the command takes
// them.
type FlagSet struct {
	*flag.FlagSet
	cmd      string
	synopsis []string
	// Positional names the positional arguments the command accepts ("" for none).
	Positional string
}

// NewFlagSet returns the flag set of `tailproof <cmd>`, whose usage starts
// with the synopsis lines.
func NewFlagSet(cmd string, synopsis ...string) *FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, usage is printed by Usage
	fs.Usage = func() {}
	return &FlagSet{FlagSet: fs, cmd: cmd, synopsis: synopsis}
}

// Usage prints the synopsis, the flags and the exit codes.
func (f *FlagSet) Usage(w io.Writer) {
	for _, l := range f.synopsis {
		fmt.Fprintln(w, l)
	}
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	fmt.Fprintln(w, "\nexit codes:")
	for _, c := range Codes {
		fmt.Fprintf(w, "  %3d  %s\n", c.Code, c.Meaning)
	}
}

// Parse parses args. After --help it returns an error Main maps to exit 0;
// a bad flag or value is a usage error naming it.
func (f *FlagSet) Parse(args []string, stdout io.Writer) error {
	err := f.FlagSet.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		f.Usage(stdout)
		return errHelp
	}
	if err != nil {
		return Usagef("%s (see tailproof %s --help)", strings.TrimPrefix(err.Error(), "flag: "), f.cmd)
	}
	if f.Positional == "" && f.NArg() > 0 {
		return Usagef("unexpected argument %q (see tailproof %s --help)", f.Arg(0), f.cmd)
	}
	return nil
}

// Given reports whether the flag was set on the command line.
func (f *FlagSet) Given(name string) bool {
	given := false
	f.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

// AtLeast checks an integer flag's lower bound.
func AtLeast(flagName string, v, min int) error {
	if v < min {
		return Usagef("%s must be at least %d, got %d", flagName, min, v)
	}
	return nil
}

// MaxUnixMillis is the largest time a JavaScript Date holds (ECMAScript's
// time value range, ±8.64e15 ms: the year 275760). Qwen Code reads a ledger
// record's `at` into a Date; past this it is an Invalid Date.
const MaxUnixMillis = 8_640_000_000_000_000

// UnixMillis checks a --now value: a positive time a JavaScript Date holds.
func UnixMillis(flagName string, v int64) error {
	if v <= 0 || v > MaxUnixMillis {
		return Usagef("%s must be a time in Unix milliseconds from 1 to %d (what a JavaScript Date holds), got %d", flagName, int64(MaxUnixMillis), v)
	}
	return nil
}
