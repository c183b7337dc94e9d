package tailproof

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tailproof/tailproof/adapters/memory"

	"github.com/tailproof/tailproof/projections/ownership"
)

// Status scenarios (testdata/status/*.txt) use the reconcile scenario
// notation for ledger and transcript (scenario_test.go), plus:
//
//	status [reference] [ledger] [auto] [owner=<class>:<turn>...]
//	    prints RecoveryStatus.Describe; ledger passes the scenario ledger,
//	    auto sets AllowAutoContinue, owner adds live owners.
//	reconcile ...   as in the reconcile scenarios, to show both side by side.
func TestStatusScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/status", func(t *testing.T, path string) {
		var s *scenario
		reset := func() { s = &scenario{store: memory.NewQwenStore(), sid: scenarioSession} }
		reset()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "reset":
				reset()
				return ""
			case "ledger":
				return s.writeLedger(t, d.Input)
			case "transcript":
				return s.writeTranscript(t, d.Input)
			case "reconcile":
				return s.reconcile(t, d)
			case "status":
				return statusCmd(t, s, d)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func statusCmd(t *testing.T, s *scenario, d *datadriven.TestData) string {
	opts := StatusOptions{}
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "reference":
			opts.Reference = true
		case "ledger":
			opts.Ledger = s.store
		case "auto":
			opts.AllowAutoContinue = true
		case "owner":
			for _, v := range arg.Vals {
				cs, turn, _ := strings.Cut(v, ":")
				c, ok := ownership.ParseClass(cs)
				if !ok {
					t.Fatalf("bad owner %q", v)
				}
				opts.Owners = append(opts.Owners, ownership.Owner{Class: c, Turn: turn})
			}
		default:
			t.Fatalf("unknown status argument %q", arg.Key)
		}
	}
	st, err := Status(context.Background(), s.store, s.sid, opts)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	return st.Describe()
}
