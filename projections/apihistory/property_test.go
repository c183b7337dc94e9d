package apihistory_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
)

// TestBoundedEqualsUnbounded: the bounded fold's tail is the suffix of the
// full history, reaches Keep entries before the trailing notification run,
// and every summary field agrees.
func TestBoundedEqualsUnbounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		strip := rapid.Bool().Draw(t, "strip")
		keep := rapid.IntRange(1, 5).Draw(t, "keep")
		full, err := apihistory.Build(evs, apihistory.Options{StripThoughts: strip})
		if err != nil {
			t.Fatal(err)
		}
		f := apihistory.New(apihistory.Options{StripThoughts: strip, Keep: keep})
		for _, ev := range evs {
			if err := f.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
		if d := boundedDiff(full, f.Result(), keep); d != "" {
			t.Fatal(d)
		}
	})
}

// TestIncrementalEqualsScratch: reading Result between records never
// disturbs the fold, and each intermediate result equals a fresh fold of the
// same prefix.
func TestIncrementalEqualsScratch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		opts := apihistory.Options{StripThoughts: rapid.Bool().Draw(t, "strip"), Keep: rapid.IntRange(1, 4).Draw(t, "keep")}
		inc := apihistory.New(opts)
		for i, ev := range evs {
			if err := inc.Add(ev); err != nil {
				t.Fatal(err)
			}
			got := inc.Result()
			scratch := apihistory.New(opts)
			for _, e := range evs[:i+1] {
				_ = scratch.Add(e)
			}
			if d := cmp.Diff(scratch.Result(), got); d != "" {
				t.Fatalf("after record %d:\n%s", i, d)
			}
		}
	})
}

// TestMatchesNaiveModel compares the incremental fold (its counters, runs
// and memo) with a direct, quadratic transcription of the reference rules.
func TestMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		strip := rapid.Bool().Draw(t, "strip")
		got, err := apihistory.Build(evs, apihistory.Options{StripThoughts: strip})
		if err != nil {
			t.Fatal(err)
		}
		want := naive(evs, strip)
		var gotC []qwen.Content
		for _, e := range got.Tail {
			gotC = append(gotC, e.Content)
		}
		if d := cmp.Diff(want.history, gotC, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("history:\n%s", d)
		}
		if d := cmp.Diff(fmt.Sprint(want.completed, want.trailing, want.cancelled),
			fmt.Sprint(got.CompletedToolCallIDs, got.TrailingSystemNotifications, got.CancelledLastTurn)); d != "" {
			t.Fatalf("summary (completed trailing cancelled):\n%s", d)
		}
	})
}

type naiveResult struct {
	history   []qwen.Content
	completed []string
	trailing  int
	cancelled bool
}

// naive is the reference accumulator written as plainly as possible: whole
// arrays, rescans, no bound.
func naive(evs []events.Event, strip bool) naiveResult {
	var hist []qwen.Content
	var flags []bool
	var tags []string
	var completed []string
	var last *qwen.Record
	unique := func(h []qwen.Content, id string) bool {
		if id == "" {
			return false
		}
		calls, results := 0, 0
		for _, c := range h {
			for _, p := range c.Parts {
				if p.HasID && p.ID == id && p.Kind == qwen.PartFunctionCall {
					calls++
				}
				if p.HasID && p.ID == id && p.Kind == qwen.PartFunctionResponse {
					results++
				}
			}
		}
		return calls == 1 && results == 1
	}
	del := func(id string) {
		completed = slices.DeleteFunc(completed, func(s string) bool { return s == id })
	}
	add := func(id string) {
		if !slices.Contains(completed, id) {
			completed = append(completed, id)
		}
	}
	for _, ev := range evs {
		r := ev.Body.(*qwen.Record)
		if r.Type == "tool_result" && r.Subtype == "code_mode_tool_result" {
			continue
		}
		if r.Type == "system" {
			switch r.Subtype {
			case "slash_command":
				sc := r.SlashCommand
				all := true
				for _, it := range sc.OutputItemTypes {
					all = all && it == "assistant"
				}
				if sc.Phase == "result" && !sc.SentToModel && len(sc.OutputItemTypes) > 0 && all &&
					last != nil && last.Type == "user" && !last.HasSubtype && last.Message.Role == "user" &&
					len(last.Message.Parts) == 1 && last.Message.Parts[0].Kind == qwen.PartText &&
					last.Message.Parts[0].OnlyText && last.Message.Parts[0].Text == sc.RawCommand {
					hist, flags, tags = hist[:len(hist)-1], flags[:len(flags)-1], tags[:len(tags)-1]
				}
				if last != nil && last.Type == "user" {
					last = nil
				}
			case "goal_turn_end":
				g, p := r.GoalContext, last
				if p != nil && p.Type == "tool_result" && g != nil && g.GoalID != "" && g.TurnID != "" &&
					p.GoalContext != nil && p.GoalContext.GoalID == g.GoalID && p.GoalContext.TurnID == g.TurnID {
					rev, err1 := strconv.ParseFloat(g.Revision, 64)
					prev, err2 := strconv.ParseFloat(p.GoalContext.Revision, 64)
					has := false
					for _, pt := range p.Message.Parts {
						has = has || (pt.Kind == qwen.PartFunctionResponse && pt.HasID && pt.ID == r.GoalTurnEnd.ToolCallID)
					}
					if err1 == nil && err2 == nil && rev == float64(int64(rev)) && rev == prev && has && unique(hist, r.GoalTurnEnd.ToolCallID) {
						add(r.GoalTurnEnd.ToolCallID)
					}
				}
			case "chat_compression":
				if r.Compression.HasHistory {
					hist, flags, tags, completed = nil, nil, nil, nil
					for _, c := range r.Compression.History {
						hist = append(hist, qwen.Content{Role: c.Role, Parts: slices.Clone(c.Parts)})
						flags, tags = append(flags, false), append(tags, "")
					}
					for _, id := range r.Compression.CompletedToolCallIDs {
						if unique(hist, id) {
							add(id)
						}
					}
					last = nil
				}
			}
			continue
		}
		if r.Message == nil || r.Subtype == "realtime_message" {
			continue
		}
		for _, p := range r.Message.Parts {
			if p.HasID && p.ID != "" && (p.Kind == qwen.PartFunctionCall || p.Kind == qwen.PartFunctionResponse) {
				del(p.ID)
			}
		}
		merged := false
		if r.Subtype == "mid_turn_user_message" && len(hist) > 0 && hist[len(hist)-1].Role == "user" {
			done := false
			for _, p := range hist[len(hist)-1].Parts {
				done = done || (p.Kind == qwen.PartFunctionResponse && p.HasID && slices.Contains(completed, p.ID))
			}
			if !done {
				prev := &hist[len(hist)-1]
				prev.Parts = append(slices.Clone(prev.Parts), r.Message.Parts...)
				merged = true
			}
		}
		if !merged {
			hist = append(hist, qwen.Content{Role: r.Message.Role, Parts: slices.Clone(r.Message.Parts)})
			flags = append(flags, r.Provenance == "system" && r.Subtype == "notification" && !r.HasBackground && !r.DeliveredTurn)
			tag := ""
			if r.Type == "user" && r.Subtype == "" {
				tag = r.PromptID
			}
			tags = append(tags, tag)
		}
		last = r
	}
	if strip {
		var h []qwen.Content
		var f []bool
		var tg []string
		for i, c := range hist {
			var ps []qwen.Part
			for _, p := range c.Parts {
				if !p.Thought {
					ps = append(ps, p)
				}
			}
			if c.Parts != nil && len(ps) == 0 {
				continue
			}
			if ps == nil {
				ps = c.Parts
			}
			h, f, tg = append(h, qwen.Content{Role: c.Role, Parts: ps}), append(f, flags[i]), append(tg, tags[i])
		}
		hist, flags, tags = h, f, tg
	}
	res := naiveResult{history: hist}
	for _, id := range completed {
		if unique(hist, id) {
			res.completed = append(res.completed, id)
		}
	}
	for i := len(flags) - 1; i >= 0 && flags[i]; i-- {
		res.trailing++
	}
	res.cancelled = naiveCancelled(evs, hist, tags, res.trailing)
	return res
}

func naiveCancelled(evs []events.Event, hist []qwen.Content, tags []string, trailing int) bool {
	end := len(hist)
	for end > 0 && apihistory.IsSystemNotificationContent(hist[end-1]) && end-1 >= len(hist)-trailing {
		end--
	}
	pid := ""
	for i := end - 1; i >= 0; i-- {
		c := hist[i]
		tagged := tags[i] != ""
		ok := false
		if c.Role == "user" && len(c.Parts) > 0 && !slices.ContainsFunc(c.Parts, func(p qwen.Part) bool { return p.Kind == qwen.PartFunctionResponse }) &&
			!apihistory.IsSystemReminderContent(c) && slices.ContainsFunc(c.Parts, func(p qwen.Part) bool { return p.Kind == qwen.PartText && p.Text != "" }) {
			ok = true // the generator never draws todo-stop-guard text
		}
		if !ok && c.Role == "user" && !slices.ContainsFunc(c.Parts, func(p qwen.Part) bool { return p.Kind == qwen.PartFunctionResponse }) &&
			slices.ContainsFunc(c.Parts, func(p qwen.Part) bool { return p.Kind == qwen.PartInlineData || p.Kind == qwen.PartFileData }) {
			ok = true
		}
		if ok {
			_ = tagged
			pid = tags[i]
			break
		}
	}
	if pid == "" {
		return false
	}
	n := 0
	for _, t := range tags {
		if t == pid {
			n++
		}
	}
	if n != 1 {
		return false
	}
	type hint struct {
		kind           string
		prompt, daemon string
		cancelled      bool
	}
	var hints []hint
	for _, ev := range evs {
		r := ev.Body.(*qwen.Record)
		switch {
		case r.Type == "user" && !r.HasSubtype:
			hints = append(hints, hint{kind: "prompt", prompt: r.PromptID, daemon: r.DaemonPromptID})
		case r.Type == "system" && r.Subtype == "turn_attempt":
			hints = append(hints, hint{kind: "attempt", prompt: r.PromptID, daemon: r.DaemonPromptID})
		case r.Type == "system" && r.Subtype == "turn_result" && r.TurnResult.EndedAt != "" && r.TurnResult.PromptID != "":
			hints = append(hints, hint{kind: "result", prompt: r.TurnResult.PromptID,
				cancelled: r.TurnResult.State == "cancelled" && r.TurnResult.HasCancelledAt})
		default:
			hints = append(hints, hint{})
		}
	}
	owner := -1
	for i, h := range hints {
		if h.kind == "prompt" && h.prompt == pid {
			if owner >= 0 {
				return false
			}
			owner = i
		}
	}
	if owner < 0 {
		return false
	}
	for i := owner + 1; i < len(hints); i++ {
		if hints[i].kind == "attempt" {
			owner = i
		}
	}
	o := hints[owner]
	if o.prompt != pid || o.daemon == "" {
		return false
	}
	same := 0
	for _, h := range hints {
		if h.kind != "result" && h.kind != "" && h.daemon == o.daemon {
			same++
		}
	}
	if same != 1 {
		return false
	}
	res := -1
	for i, h := range hints {
		if h.kind == "result" && h.prompt == o.daemon {
			if res >= 0 {
				return false
			}
			res = i
		}
	}
	return res > owner && hints[res].cancelled
}

// TestSummaryMatchesResult: Summary answers, after every record, what
// Result's Total, CompletedToolCallIDs, TrailingSystemNotifications and last
// Tail entry say.
func TestSummaryMatchesResult(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := histtest.Records(t)
		opts := apihistory.Options{StripThoughts: rapid.Bool().Draw(t, "strip"), Keep: rapid.IntRange(1, 4).Draw(t, "keep")}
		f := apihistory.New(opts)
		for i, ev := range evs {
			if err := f.Add(ev); err != nil {
				t.Fatal(err)
			}
			res := f.Result()
			total, completed, trailing, last, ok := f.Summary()
			if total != res.Total || completed != len(res.CompletedToolCallIDs) || trailing != res.TrailingSystemNotifications || ok != (len(res.Tail) > 0) {
				t.Fatalf("after record %d: Summary %d %d %d %v, Result %d %d %d %d entries", i, total, completed, trailing, ok,
					res.Total, len(res.CompletedToolCallIDs), res.TrailingSystemNotifications, len(res.Tail))
			}
			if ok && last.Describe() != res.Tail[len(res.Tail)-1].Describe() {
				t.Fatalf("after record %d: last %s, Result's %s", i, last.Describe(), res.Tail[len(res.Tail)-1].Describe())
			}
		}
	})
}
