package v0

import (
	"os"
	"testing"

	"github.com/tailproof/tailproof/simulations/fuzzmin"
)

// TestMain bounds the fuzzers' minimization of a new input to 5 s
// (fuzzmin.Main; -fuzzminimizetime overrides).
func TestMain(m *testing.M) { os.Exit(fuzzmin.Main(m, "5s")) }
