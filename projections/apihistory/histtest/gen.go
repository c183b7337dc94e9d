package histtest

import (
	"strconv"

	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// genPart draws a part from a small alphabet so ids collide, envelopes
// appear and slash commands match often.
func genPart(t *rapid.T, role string) qwen.Part {
	ids := []string{"c1", "c2", "c3"}
	switch rapid.IntRange(0, 6).Draw(t, "part") {
	case 0:
		return qwen.Part{Kind: qwen.PartText, Text: Envelope(rapid.SampledFrom([]string{"a", "b"}).Draw(t, "nt")), OnlyText: true}
	case 1:
		return qwen.Part{Kind: qwen.PartText, Text: Reminder("r"), OnlyText: true}
	case 2:
		return qwen.Part{Kind: qwen.PartText, Text: "think", Thought: true}
	case 3:
		p := qwen.Part{Kind: qwen.PartFunctionCall, Name: "shell", HasName: true}
		if role == "user" {
			p.Kind = qwen.PartFunctionResponse
		}
		p.Thought = rapid.IntRange(0, 5).Draw(t, "fnthought") == 0
		p.ID = rapid.SampledFrom(ids).Draw(t, "id")
		p.HasID = rapid.IntRange(0, 5).Draw(t, "hasid") > 0
		if !p.HasID {
			p.ID = ""
		}
		return p
	case 4:
		return qwen.Part{Kind: qwen.PartInlineData}
	}
	return qwen.Part{Kind: qwen.PartText, Text: rapid.SampledFrom([]string{"/help", "hi", ""}).Draw(t, "text"), OnlyText: true}
}

func genContent(t *rapid.T, role string) qwen.Content {
	n := rapid.IntRange(0, 3).Draw(t, "nparts")
	c := qwen.Content{Role: role, Parts: []qwen.Part{}}
	for range n {
		c.Parts = append(c.Parts, genPart(t, role))
	}
	return c
}

func genGoal(t *rapid.T) *qwen.GoalContext {
	if rapid.Bool().Draw(t, "goal") {
		return nil
	}
	return &qwen.GoalContext{GoalID: "G", TurnID: "T", Revision: rapid.SampledFrom([]string{"1", "1.0", "2", "1.5"}).Draw(t, "rev")}
}

// genRecord draws one transcript record exercising every accumulator rule.
func genRecord(t *rapid.T, i int) events.Event {
	r := &qwen.Record{UUID: "r" + strconv.Itoa(i)}
	prov := rapid.SampledFrom([]string{"", "system", "real_user", "assistant_output", "tool_result"}).Draw(t, "prov")
	ids := []string{"c1", "c2", "c3", ""}
	prompts := []string{"p1", "p2", ""}
	daemons := []string{"d1", "d2", ""}
	switch rapid.IntRange(0, 14).Draw(t, "kind") {
	case 0, 1:
		r.Type = qwen.TypeUser
		c := genContent(t, "user")
		r.Message = &c
		r.PromptID = rapid.SampledFrom(prompts).Draw(t, "prompt")
		r.DaemonPromptID = rapid.SampledFrom(daemons).Draw(t, "daemon")
	case 2, 3:
		r.Type = qwen.TypeAssistant
		c := genContent(t, "model")
		r.Message = &c
	case 4:
		r.Type = qwen.TypeToolResult
		c := genContent(t, "user")
		r.Message = &c
		r.GoalContext = genGoal(t)
		if rapid.IntRange(0, 9).Draw(t, "codemode") == 0 {
			r.Subtype, r.HasSubtype = qwen.SubtypeCodeModeToolResult, true
		}
	case 5:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeUser, qwen.SubtypeNotification, true
		c := genContent(t, "user")
		r.Message = &c
		r.DeliveredTurn = rapid.Bool().Draw(t, "delivered")
		r.HasBackground = rapid.Bool().Draw(t, "stamped")
	case 6:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeUser, qwen.SubtypeMidTurnUserMessage, true
		c := genContent(t, "user")
		r.Message = &c
	case 7:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeSystem, qwen.SubtypeSlashCommand, true
		items := rapid.SampledFrom([][]string{{"assistant"}, {}, {"assistant", "info"}}).Draw(t, "items")
		r.SlashCommand = &qwen.SlashCommand{
			Phase:           rapid.SampledFrom([]string{"result", "invocation"}).Draw(t, "phase"),
			RawCommand:      rapid.SampledFrom([]string{"/help", "hi"}).Draw(t, "raw"),
			SentToModel:     rapid.IntRange(0, 4).Draw(t, "sent") == 0,
			OutputItemTypes: items, HasOutputItems: true, OutputItemsLength: len(items),
		}
	case 8:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeSystem, qwen.SubtypeGoalTurnEnd, true
		r.GoalContext = genGoal(t)
		r.GoalTurnEnd = &qwen.GoalTurnEnd{ToolCallID: rapid.SampledFrom(ids).Draw(t, "tool")}
	case 9:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeSystem, qwen.SubtypeChatCompression, true
		c := &qwen.Compression{HasHistory: rapid.IntRange(0, 3).Draw(t, "hashist") > 0}
		if c.HasHistory {
			for range rapid.IntRange(0, 3).Draw(t, "nhist") {
				c.History = append(c.History, genContent(t, rapid.SampledFrom([]string{"user", "model"}).Draw(t, "role")))
			}
		}
		c.CompletedToolCallIDs = rapid.SliceOfN(rapid.SampledFrom(ids), 0, 3).Draw(t, "completed")
		r.Compression = c
	case 10:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeSystem, qwen.SubtypeTurnAttempt, true
		r.PromptID = rapid.SampledFrom(prompts).Draw(t, "prompt")
		r.DaemonPromptID = rapid.SampledFrom(daemons).Draw(t, "daemon")
	case 11:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeSystem, qwen.SubtypeTurnResult, true
		tr := &qwen.TurnResult{
			PromptID: rapid.SampledFrom(daemons).Draw(t, "result"),
			State:    rapid.SampledFrom([]string{"cancelled", "completed"}).Draw(t, "state"),
			EndedAt:  rapid.SampledFrom([]string{"6", ""}).Draw(t, "ended"),
		}
		if rapid.Bool().Draw(t, "cancelledAt") {
			tr.HasCancelledAt, tr.CancelledAt = true, "5"
		}
		r.TurnResult = tr
	case 12:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeUser, qwen.SubtypeRealtimeMessage, true
		c := genContent(t, "user")
		r.Message = &c
	case 13:
		r.Type, r.Subtype, r.HasSubtype = qwen.TypeUser, qwen.SubtypeCron, true
		c := genContent(t, "user")
		r.Message = &c
	default:
		r.Type = qwen.TypeAssistant // no message
	}
	r.Provenance = prov
	return qwen.Envelope(r, events.Position{Line: i + 1})
}

// Records draws a random active-chain record sequence that exercises every
// accumulator rule, enveloped as the codec envelopes records.
func Records(t *rapid.T) []events.Event {
	n := rapid.IntRange(0, 60).Draw(t, "n")
	out := make([]events.Event, 0, n)
	for len(out) < n {
		i := len(out)
		// Coherent fragments make the rare rules (a goal call completing, a
		// local slash command popping its prompt) common.
		switch rapid.IntRange(0, 7).Draw(t, "fragment") {
		case 0:
			id := rapid.SampledFrom([]string{"c1", "c2", "c3"}).Draw(t, "gid")
			g := &qwen.GoalContext{GoalID: "G", TurnID: "T", Revision: "1"}
			call := &qwen.Record{UUID: "r" + strconv.Itoa(i), Type: qwen.TypeAssistant, Provenance: "assistant_output",
				Message: &qwen.Content{Role: "model", Parts: []qwen.Part{{Kind: qwen.PartFunctionCall, ID: id, HasID: true, Name: "update_goal", HasName: true}}}}
			res := &qwen.Record{UUID: "r" + strconv.Itoa(i+1), Type: qwen.TypeToolResult, Provenance: "tool_result", GoalContext: g,
				Message: &qwen.Content{Role: "user", Parts: []qwen.Part{{Kind: qwen.PartFunctionResponse, ID: id, HasID: true, Name: "update_goal", HasName: true}}}}
			end := &qwen.Record{UUID: "r" + strconv.Itoa(i+2), Type: qwen.TypeSystem, Subtype: qwen.SubtypeGoalTurnEnd, HasSubtype: true,
				Provenance: "system", GoalContext: g, GoalTurnEnd: &qwen.GoalTurnEnd{ToolCallID: id}}
			for j, r := range []*qwen.Record{call, res, end} {
				out = append(out, qwen.Envelope(r, events.Position{Line: i + j + 1}))
			}
		case 1:
			text := rapid.SampledFrom([]string{"/help", Envelope("a")}).Draw(t, "cmd")
			u := &qwen.Record{UUID: "r" + strconv.Itoa(i), Type: qwen.TypeUser, Provenance: "real_user",
				Message: &qwen.Content{Role: "user", Parts: []qwen.Part{{Kind: qwen.PartText, Text: text, OnlyText: true}}}}
			sc := &qwen.Record{UUID: "r" + strconv.Itoa(i+1), Type: qwen.TypeSystem, Subtype: qwen.SubtypeSlashCommand, HasSubtype: true,
				SlashCommand: &qwen.SlashCommand{Phase: "result", RawCommand: text, OutputItemTypes: []string{"assistant"}, HasOutputItems: true, OutputItemsLength: 1}}
			out = append(out, qwen.Envelope(u, events.Position{Line: i + 1}), qwen.Envelope(sc, events.Position{Line: i + 2}))
		default:
			out = append(out, genRecord(t, i))
		}
	}
	return out
}
