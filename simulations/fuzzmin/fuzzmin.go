// Package fuzzmin bounds Go's fuzz minimization in a test binary.
//
// Go's fuzzer minimizes every input that adds coverage before it fuzzes on:
// it runs the input's cuts, up to thousands of times (quadratically in its
// length), for at most -test.fuzzminimizetime, 60 s by default, and the
// coordinator counts the worker's executions only when that call returns.
// For a fuzz target that takes milliseconds on inputs of kilobytes, one
// minimization can take a whole 60-second run: the printed count stalls at
// a handful of executions (FuzzHarness in events/dsh: 8; FuzzLoadChain in
// events/qwen: 4–5, while its worker had run 50,650 inputs) and nothing new
// is added to the corpus. Bounded, the run fuzzes between minimizations.
package fuzzmin

import (
	"flag"
	"testing"
)

// Main is the body of a TestMain (which passes its result to os.Exit): it
// makes bound the default of -test.fuzzminimizetime unless the command line
// sets the flag, and runs the tests. bound is the flag's text: a duration
// ("5s") or a count of calls ("200x"), which bounds a slow target's
// minimization by its work rather than the clock (FuzzCrashPass, whose
// inputs take ~10 ms each: 17 executions in 60 s at "5s", 11,284 in 30 s at
// "200x").
func Main(m *testing.M, bound string) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		if err := flag.Set("test.fuzzminimizetime", bound); err != nil {
			panic(err) // a malformed bound, or no testing flags: a bug in the caller
		}
	}
	return m.Run()
}
