package apihistory_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
)

// TestScenarios folds each scenario's records and prints the full history.
// Every scenario is also folded bounded (keep=1 and keep=3) and the harness
// fails if the bounded tail is not the unbounded history's suffix or any
// summary field differs: each scenario doubles as a bound check.
func TestScenarios(t *testing.T) {
	// Only *.txt: rapid stores failing cases under testdata/rapid.
	paths, _ := filepath.Glob("testdata/*.txt")
	for _, path := range paths {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "fold" {
				return "error: unknown command " + d.Cmd + "\n"
			}
			evs, err := histtest.ParseRecords(d.Input)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			opts := apihistory.Options{StripThoughts: d.HasArg("strip")}
			full, err := apihistory.Build(evs, opts)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			for _, keep := range []int{1, 3} {
				o := opts
				o.Keep = keep
				f := apihistory.New(o)
				for _, ev := range evs {
					if err := f.Add(ev); err != nil {
						t.Fatal(err)
					}
				}
				if diff := boundedDiff(full, f.Result(), keep); diff != "" {
					t.Errorf("%s: keep=%d bounded fold diverges:\n%s", d.Pos, keep, diff)
				}
			}
			var b strings.Builder
			for i, e := range full.Tail {
				fmt.Fprintf(&b, "%d %s\n", i, e.Describe())
			}
			fmt.Fprintf(&b, "total=%d completed=%v trailing=%d cancelled=%v\n",
				full.Total, full.CompletedToolCallIDs, full.TrailingSystemNotifications, full.CancelledLastTurn)
			return b.String()
		})
	}
}

// boundedDiff checks a bounded result against the unbounded one: the tail is
// a suffix, it reaches keep entries before the trailing shape run, and every
// summary field is equal.
func boundedDiff(full, got apihistory.Result, keep int) string {
	if got.Total != full.Total {
		return "total " + strconv.Itoa(got.Total) + " != " + strconv.Itoa(full.Total)
	}
	if len(got.Tail) > len(full.Tail) {
		return "bounded tail longer than the history"
	}
	if d := cmp.Diff(full.Tail[len(full.Tail)-len(got.Tail):], got.Tail); d != "" {
		return "tail is not a suffix:\n" + d
	}
	run := 0
	for i := len(full.Tail) - 1; i >= 0 && apihistory.IsSystemNotificationContent(full.Tail[i].Content); i-- {
		run++
	}
	if need := min(len(full.Tail), run+keep); len(got.Tail) < need {
		return fmt.Sprintf("tail holds %d entries, need %d (run %d + keep %d)", len(got.Tail), need, run, keep)
	}
	type summary struct {
		C []string
		T int
		X bool
	}
	return cmp.Diff(summary{full.CompletedToolCallIDs, full.TrailingSystemNotifications, full.CancelledLastTurn},
		summary{got.CompletedToolCallIDs, got.TrailingSystemNotifications, got.CancelledLastTurn})
}
