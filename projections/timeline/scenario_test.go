package timeline_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tailproof/tailproof/projections/timeline"
)

// TestScenarios runs testdata/*.txt. Input: a `ledger:` section, a
// `transcript:` section, or a `dsh:` section, one record per line.
// Commands: `timeline` prints the merged order and every item's Describe;
// `cut n=N` prints the bytes each file keeps after a crash right after
// merged event N. Rewrite with -rewrite.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var led, tr, dl strings.Builder
			cur := &tr
			for _, line := range strings.Split(d.Input, "\n") {
				switch line {
				case "ledger:":
					cur = &led
					continue
				case "transcript:":
					cur = &tr
					continue
				case "dsh:":
					cur = &dl
					continue
				}
				// `\` at the end of a line means the record has no newline
				// (a torn tail).
				if s, ok := strings.CutSuffix(line, `\`); ok {
					cur.WriteString(s)
				} else {
					cur.WriteString(line + "\n")
				}
			}
			var ev *timeline.Evidence
			var err error
			if dl.Len() > 0 {
				ev, err = timeline.DSHEvidence([]byte(dl.String()), 0)
			} else {
				ev, err = timeline.QwenEvidence([]byte(led.String()), []byte(tr.String()), 0)
			}
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out strings.Builder
			switch d.Cmd {
			case "timeline":
				tl := timeline.New()
				for i := range ev.Len() {
					e := ev.Event(i)
					items := tl.Add(e)
					fmt.Fprintf(&out, "%d %s:%d %s\n", i+1, e.Stream, e.Pos.Line, e.Kind)
					for _, it := range items {
						fmt.Fprintf(&out, "  %s\n", it.Describe())
					}
				}
				for s, src := range ev.Sources {
					for _, b := range src.Bad {
						fmt.Fprintf(&out, "bad %d: %v\n", s, b)
					}
				}
			case "cut":
				var n int
				d.ScanArgs(t, "n", &n)
				cut := ev.Cut(n)
				for s, name := range []string{"first", "second"} {
					fmt.Fprintf(&out, "%s: %s\n", name, strconv.Quote(string(cut[s])))
				}
			default:
				t.Fatalf("unknown command %q", d.Cmd)
			}
			return out.String()
		})
	})
}
