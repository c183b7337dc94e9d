package turns_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

func parse(t *testing.T, input string) []dsh.Record {
	t.Helper()
	var recs []dsh.Record
	for _, l := range strings.Split(input, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		r, err := dsh.ParseRecord([]byte(l))
		if err != nil {
			t.Fatalf("bad input line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestClosers(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "closers":
				var e turns.Enclosure
				for _, r := range parse(t, d.Input) {
					_ = e.Apply(r)
				}
				var out strings.Builder
				fmt.Fprintln(&out, e.Describe())
				cl, err := e.Closers()
				if err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
				}
				if err == nil && len(cl) == 0 {
					fmt.Fprintln(&out, "no closers")
				}
				for _, c := range cl {
					fmt.Fprintf(&out, "%s\n", dsh.AppendRecord(nil, c))
				}
				return out.String()
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

// genLog draws a plausible dsh log: turns, steps, tool calls in assistant
// messages, some answered, and a crash point anywhere.
func genLog(t *rapid.T) []dsh.Record {
	var recs []dsh.Record
	add := func(p dsh.Payload) { recs = append(recs, dsh.NewRecord(int64(len(recs)), int64(len(recs))*10, p)) }
	turnsN := rapid.IntRange(0, 4).Draw(t, "turns")
	for turn := int64(1); turn <= int64(turnsN); turn++ {
		add(&dsh.TurnStart{Turn: turn, Trigger: dsh.Trigger{Kind: "message", Source: &dsh.Source{Kind: "user"}}})
		steps := rapid.IntRange(0, 3).Draw(t, "steps")
		for step := int64(1); step <= int64(steps); step++ {
			add(&dsh.StepStart{Turn: turn, Step: step})
			calls := rapid.IntRange(0, 3).Draw(t, "calls")
			var blocks []dsh.Block
			for c := 0; c < calls; c++ {
				blocks = append(blocks, dsh.Block{Type: "tool-call", ID: fmt.Sprintf("c%d-%d-%d", turn, step, c), Name: "bash", Arguments: "{}"})
			}
			add(&dsh.AssistantMessage{Turn: turn, Step: step, Content: blocks})
			for _, b := range blocks {
				if rapid.Bool().Draw(t, "answered") {
					add(&dsh.ToolResult{Turn: turn, Step: step, CallID: b.ID, Content: []dsh.Block{{Type: "text", Text: "ok"}}})
				}
			}
			add(&dsh.StepEnd{Turn: turn, Step: step})
		}
		add(&dsh.TurnEnd{Turn: turn, Reason: dsh.Reason{Kind: "completed"}})
	}
	cut := rapid.IntRange(0, len(recs)).Draw(t, "crash")
	return recs[:cut]
}

// After the closers are appended the log is balanced, contiguous, and
// needs no further closers; the closers never move time forward.
func TestClosersBalance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		log := genLog(t)
		cl, err := turns.Closers(log)
		if err != nil {
			t.Fatal(err)
		}
		all := append(append([]dsh.Record(nil), log...), cl...)
		for i, r := range all {
			if r.Seq != int64(i) {
				t.Fatalf("seq %d at index %d", r.Seq, i)
			}
			if i >= len(log) && r.Time != log[len(log)-1].Time {
				t.Fatalf("closer time %d, last real time %d", r.Time, log[len(log)-1].Time)
			}
		}
		var e turns.Enclosure
		for _, r := range all {
			if err := e.Apply(r); err != nil {
				t.Fatal(err)
			}
		}
		if !e.Balanced() || len(e.Pending()) != 0 {
			t.Fatalf("not balanced after closers: %s", e.Describe())
		}
		// Every unanswered call of the open turn got exactly one synthetic result.
		want := map[string]bool{}
		var f turns.Enclosure
		for _, r := range log {
			_ = f.Apply(r)
		}
		for _, p := range f.Pending() {
			want[p.CallID] = true
		}
		got := map[string]bool{}
		for _, c := range cl {
			if c.Type == dsh.TypeToolResult {
				p := c.Payload().(*dsh.ToolResult)
				got[p.CallID] = true
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("synthetic results differ from pending calls: %s", diff)
		}
	})
}

// Folding in pieces equals folding at once.
func TestIncrementalEqualsScratch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		log := genLog(t)
		var whole turns.Enclosure
		for _, r := range log {
			_ = whole.Apply(r)
		}
		var inc turns.Enclosure
		for i, r := range log {
			_ = inc.Apply(r)
			var scratch turns.Enclosure
			for _, s := range log[:i+1] {
				_ = scratch.Apply(s)
			}
			if inc.Describe() != scratch.Describe() {
				t.Fatalf("at %d: incremental %s, scratch %s", i, inc.Describe(), scratch.Describe())
			}
		}
		a, _ := whole.Closers()
		b, _ := inc.Closers()
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatal(diff)
		}
	})
}
