package qwen

import (
	"os"
	"testing"

	"github.com/tailproof/tailproof/simulations/fuzzmin"
)

// TestMain bounds the fuzzers' minimization of a new input to 5 s
// (-fuzzminimizetime overrides): FuzzLoadChain's minimizations took whole
// 60-second runs with Go's default (package fuzzmin).
func TestMain(m *testing.M) { os.Exit(fuzzmin.Main(m, "5s")) }
