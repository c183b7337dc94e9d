package qwen

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/events"
)

// Scenario files (testdata/*.txt):
//
//	decode [keep]            each input line through events.Decode with the Codec
//	chain [max-line=N] [torn] LoadChain + Walk over the input as a file (and
//	                          Scan, which must agree)
//
// The input is the file, one line per line, each ending in "\n" unless
// `torn` is given (then the last line has no newline). Escapes: <CR> is a
// carriage return, <BOM> U+FEFF, <NBSP> U+00A0, <BIG:N> N bytes of "x".
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if !strings.HasSuffix(path, ".txt") || strings.Contains(path, "/acts/") {
			return // testdata/acts is the turn scenarios' (acts_test.go)
		}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			file := scenarioFile(td.Input, td.HasArg("torn"))
			switch td.Cmd {
			case "decode":
				return runDecode(file, td.HasArg("keep"))
			case "chain":
				max := 0
				if td.HasArg("max-line") {
					td.ScanArgs(t, "max-line", &max)
				}
				return runChain(t, file, max)
			}
			t.Fatalf("unknown command %q", td.Cmd)
			return ""
		})
	})
}

func scenarioFile(input string, torn bool) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(input, "\n") {
		for {
			i := strings.Index(line, "<BIG:")
			if i < 0 {
				break
			}
			j := strings.IndexByte(line[i:], '>') + i
			n, _ := strconv.Atoi(line[i+5 : j])
			line = line[:i] + strings.Repeat("x", n) + line[j+1:]
		}
		line = strings.NewReplacer("<CR>", "\r", "<BOM>", "\ufeff", "<NBSP>", "\u00a0").Replace(line)
		b.WriteString(line)
		b.WriteByte('\n')
	}
	out := b.Bytes()
	if torn {
		out = out[:len(out)-1]
	}
	return out
}

func runDecode(file []byte, keep bool) string {
	var b strings.Builder
	for ev, err := range events.Decode(bytes.NewReader(file), Codec{Opts: DecodeOptions{KeepPayloads: keep}}, events.Options{}) {
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
			continue
		}
		b.WriteString(ev.Describe())
		b.WriteByte('\n')
		dumpRecord(&b, ev.Body.(*Record), keep)
	}
	return b.String()
}

// dumpRecord prints the fields Describe leaves out, one per line.
func dumpRecord(b *strings.Builder, r *Record, keep bool) {
	var f []string
	add := func(k string, v any) { f = append(f, fmt.Sprintf("%s=%v", k, v)) }
	if r.HasSubtype && r.Subtype == "" {
		add("subtype", `""`)
	}
	if !r.TimeOK && r.Timestamp != "" {
		add("timestamp", strconv.Quote(r.Timestamp)+"(invalid)")
	}
	if r.Provenance != "" {
		add("provenance", r.Provenance)
	}
	if r.DeliveredTurn {
		add("deliveredTurn", true)
	}
	if t := r.BackgroundTurn; t != nil {
		add("backgroundTurn", fmt.Sprintf("%s(task=%s kind=%s toolUse=%s source=%s label=%q startedAt=%s)",
			t.TurnID, t.TaskID, t.Kind, t.ToolUseID, t.SourceTurnID, t.Label, t.StartedAt))
	}
	if g := r.GoalContext; g != nil {
		add("goal", fmt.Sprintf("%s/%s/%s(int=%v cmp=%v)", g.GoalID, g.Revision, g.TurnID, g.RevisionIsInteger, g.RevisionComparable))
	}
	if r.Message != nil {
		for i, p := range r.Message.Parts {
			var pf []string
			if p.HasText {
				pf = append(pf, "text")
			}
			if p.OnlyText {
				pf = append(pf, "only-text")
			}
			if p.Thought {
				pf = append(pf, "thought")
			}
			if p.HasName {
				pf = append(pf, "name="+p.Name)
			}
			if keep {
				pf = append(pf, "raw="+string(p.Raw))
			}
			add(fmt.Sprintf("part%d", i), p.Kind.String()+"{"+strings.Join(pf, " ")+"}")
		}
	}
	if c := r.Compression; c != nil {
		for _, h := range c.History {
			add("history", h.Describe())
		}
		if c.CompletedToolCallIDs != nil {
			add("completedToolCallIds", c.CompletedToolCallIDs)
		}
	}
	if s := r.SlashCommand; s != nil {
		add("slash", fmt.Sprintf("sentToModel=%v hidden=%v items=%v", s.SentToModel, s.HiddenInvocation, s.OutputItemTypes))
	}
	if s := r.TurnResult; s != nil {
		add("turn_result", fmt.Sprintf("stopReason=%q startedAt=%s cancelledAt=%s endedAt=%s", s.StopReason, s.StartedAt, s.CancelledAt, s.EndedAt))
		if s.HasError {
			add("error", fmt.Sprintf("%q code=%q", s.ErrorMessage, s.ErrorCode))
		}
	}
	if s := r.CustomTitle; s != nil {
		add("title_source", s.Source)
	}
	if n := r.Notification; n != nil {
		add("notification", fmt.Sprintf("%q task=%s/%s/%s", n.DisplayText, n.TaskID, n.TaskStatus, n.TaskKind))
		if n.SourceTurnID != "" || n.ToolUseID != "" {
			add("task_source", n.SourceTurnID+"/"+n.ToolUseID)
		}
	}
	if c := r.BranchCheckpoint; c != nil {
		add("branch_checkpoint", c.StartExclusiveRecordUUID+".."+c.AssistantRecordUUID)
	}
	if len(f) > 0 {
		b.WriteString("  " + strings.Join(f, " ") + "\n")
	}
}

func runChain(t *testing.T, file []byte, max int) string {
	checkScan(t, file, LoadOptions{MaxLineBytes: max})
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file)), nil }
	c, err := LoadChain(open, LoadOptions{MaxLineBytes: max})
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "chain len=%d leaf=%s session=%s objects=%d records=%d streaming=%v\n",
		c.Len, c.LeafUUID, c.SessionID, c.Objects, c.Records, c.Streaming)
	var walked []string
	werr := c.Walk(open, func(i int, ev events.Event) error {
		walked = append(walked, ev.Describe())
		fmt.Fprintf(&b, "%d: %s\n", i, ev.Describe())
		return nil
	})
	if werr != nil {
		fmt.Fprintf(&b, "walk error: %v\n", werr)
	}
	for _, g := range c.Gaps {
		fmt.Fprintf(&b, "gap: child=%s missingParent=%s\n", g.ChildUUID, g.MissingParentUUID)
	}
	if c.Cycle != "" {
		fmt.Fprintf(&b, "cycle: %s\n", c.Cycle)
	}
	for _, d := range c.Diagnostics {
		fmt.Fprintf(&b, "diagnostic: %s\n", d)
	}
	for _, e := range c.BadLines {
		fmt.Fprintf(&b, "bad line: %v\n", e)
	}
	if d := c.Degraded(); d != "" {
		fmt.Fprintf(&b, "degraded: %s\n", d)
	}
	if c.HasFirst {
		fmt.Fprintf(&b, "first: session=%s cwd=%s\n", c.FirstSessionID, c.FirstCwd)
	}
	// The in-memory ChainOf over the codec's events must agree.
	if werr == nil && max == 0 {
		memd, mc, err := memChain(file)
		if err != nil {
			t.Fatalf("ChainOf: %v", err)
		}
		if d := cmp.Diff(walked, memd); d != "" {
			t.Errorf("ChainOf disagrees with LoadChain+Walk (-walk +mem):\n%s", d)
		}
		if d := cmp.Diff(c.Gaps, mc.Gaps); d != "" || c.Cycle != mc.Cycle {
			t.Errorf("ChainOf gaps/cycle differ: %s %q %q", d, c.Cycle, mc.Cycle)
		}
	}
	return b.String()
}
