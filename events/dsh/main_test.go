package dsh_test

import (
	"os"
	"testing"

	"github.com/tailproof/tailproof/simulations/fuzzmin"
)

// TestMain bounds the fuzzers' minimization of a new input to 5 s
// (fuzzmin.Main; -fuzzminimizetime overrides). Go's minimizer tries every
// cut of a new input (quadratic in its length) for up to 60 s by default;
// FuzzHarness's inputs are kilobytes, so with the default its first new
// input took the whole of a 60-second run (8 executions; ADR 0037, amended
// by dsh).
func TestMain(m *testing.M) { os.Exit(fuzzmin.Main(m, "5s")) }
