package main

import (
	"os"
	"testing"

	"github.com/tailproof/tailproof/simulations/fuzzmin"
)

// TestMain bounds the fuzzers' minimization of a new input to 200 calls
// (-fuzzminimizetime overrides): FuzzCrashPass's inputs take ~10 ms each, so
// its minimizations took whole 60-second runs with Go's default, and most of
// one at 5 s (17 executions in 60 s; 11,284 in 30 s at 200 calls).
func TestMain(m *testing.M) { os.Exit(fuzzmin.Main(m, "200x")) }
