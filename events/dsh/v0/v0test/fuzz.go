package v0test

import (
	"testing"
	"time"

	"github.com/tailproof/tailproof/simulations/fuzzmin"
)

// Main is the body of a TestMain (which passes its result to os.Exit): it
// makes d the default of -test.fuzzminimizetime (unless the command line
// sets the flag) and runs the tests. Go's fuzzer
// minimizes every input that adds coverage before fuzzing on, running it up
// to thousands of times (quadratically in its length) for at most that
// long, 60 s by default. The dsh log fuzzers take milliseconds per input on
// inputs of kilobytes, so one minimization could take a whole 60-second run
// (FuzzCompactScan: 377 executions and no new input reported); bounded, the
// run fuzzes between minimizations.
func Main(m *testing.M, d time.Duration) int { return fuzzmin.Main(m, d) }
