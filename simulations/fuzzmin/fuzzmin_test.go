package fuzzmin_test

import (
	"flag"
	"os"
	"testing"

	"github.com/tailproof/tailproof/simulations/fuzzmin"
)

func TestMain(m *testing.M) { os.Exit(fuzzmin.Main(m, "7s")) }

// TestDefaultIsSet: without the flag on the command line, Main made its
// duration the minimization bound (go test passes no -test.fuzzminimizetime
// unless asked; `go test -fuzzminimizetime=9s` would make this fail).
func TestDefaultIsSet(t *testing.T) {
	f := flag.Lookup("test.fuzzminimizetime")
	if f == nil {
		t.Fatal("no -test.fuzzminimizetime flag")
	}
	if got := f.Value.String(); got != "7s" {
		t.Fatalf("-test.fuzzminimizetime = %s, want 7s", got)
	}
}
