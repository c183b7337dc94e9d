package dshlog_test

import (
	"os"
	"testing"
	"time"

	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// TestMain bounds the fuzzers' minimization of a new input to 5 s
// (v0test.Main; -fuzzminimizetime overrides).
func TestMain(m *testing.M) { os.Exit(v0test.Main(m, 5*time.Second)) }
