// Package histtest is a compact, reviewer-readable notation for api-history
// entries and transcript records, shared by the scenario tests of
// projections/apihistory and projections/interruption.
//
// Parts (one entry or message is parts joined by " ++ "):
//
//	U text            user text            M text       model text
//	T text            model thought        R text       user <system-reminder> envelope
//	Nt summary        user task-notification envelope with that summary
//	FC id name        model functionCall   ("-" for an absent id or name)
//	FR id name        user functionResponse
//	IMG               user inlineData
//	EMPTY             no parts at all (role from a user:/model: prefix, default user)
//	~<part>           the part with "thought": true
//
// Text may be a Go-quoted string ("a\nb"). The role is the first part's,
// unless the line starts with "user:" or "model:".
//
// Records (one per line):
//
//	<uuid> <type>[/<subtype>] [key=value | flag]... [: <parts>]
//
// keys: prov=<provenance> delivered bg (a backgroundTurn stamp) prompt=<id> daemon=<id> goal=<goalId>/<revision>/<turnId>;
// chat_compression: completed=<id,id> and parts are entries joined by " || ";
// slash_command: phase=<p> raw=<text> items=<type,type> sent;
// goal_turn_end: tool=<id>; turn_result: result=<promptId> state=<s> cancelledAt=<n> endedAt=<n>.
package histtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
)

// Envelope is the notification text the scenarios use for "Nt summary".
func Envelope(summary string) string {
	return "<task-notification><task-id>agent-1</task-id><status>completed</status><summary>" +
		summary + "</summary></task-notification>"
}

// Reminder is the text for "R text".
func Reminder(text string) string { return "<system-reminder>\n" + text + "\n</system-reminder>" }

func unquote(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

func nameOrAbsent(s string) (string, bool) {
	if s == "-" {
		return "", false
	}
	return s, true
}

// ParsePart parses one part shorthand and returns it with the role it implies.
func ParsePart(s string) (qwen.Part, string, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "~"); ok {
		p, role, err := ParsePart(rest)
		p.Thought, p.OnlyText = true, false
		return p, role, err
	}
	op, rest, _ := strings.Cut(s, " ")
	switch op {
	case "U", "M", "T", "R", "Nt":
		text, err := unquote(rest)
		if err != nil {
			return qwen.Part{}, "", fmt.Errorf("histtest: part %q: %w", s, err)
		}
		p := qwen.Part{Kind: qwen.PartText, Text: text, OnlyText: true}
		switch op {
		case "U":
			return p, "user", nil
		case "M":
			return p, "model", nil
		case "T":
			p.Thought, p.OnlyText = true, false
			return p, "model", nil
		case "R":
			p.Text = Reminder(text)
			return p, "user", nil
		default:
			p.Text = Envelope(text)
			return p, "user", nil
		}
	case "FC", "FR":
		f := strings.Fields(rest)
		if len(f) != 2 {
			return qwen.Part{}, "", fmt.Errorf("histtest: part %q: want %s <id> <name>", s, op)
		}
		p := qwen.Part{Kind: qwen.PartFunctionCall}
		p.ID, p.HasID = nameOrAbsent(f[0])
		p.Name, p.HasName = nameOrAbsent(f[1])
		if op == "FR" {
			p.Kind = qwen.PartFunctionResponse
			return p, "user", nil
		}
		return p, "model", nil
	case "IMG":
		return qwen.Part{Kind: qwen.PartInlineData}, "user", nil
	}
	return qwen.Part{}, "", fmt.Errorf("histtest: unknown part %q", s)
}

// ParseContent parses one entry line.
func ParseContent(line string) (qwen.Content, error) {
	line = strings.TrimSpace(line)
	role := ""
	for _, r := range []string{"user:", "model:"} {
		if rest, ok := strings.CutPrefix(line, r); ok {
			role, line = strings.TrimSuffix(r, ":"), strings.TrimSpace(rest)
		}
	}
	c := qwen.Content{Role: role, Parts: []qwen.Part{}}
	if line == "EMPTY" {
		if c.Role == "" {
			c.Role = "user"
		}
		return c, nil
	}
	for _, ps := range strings.Split(line, " ++ ") {
		p, r, err := ParsePart(ps)
		if err != nil {
			return qwen.Content{}, err
		}
		if c.Role == "" {
			c.Role = r
		}
		c.Parts = append(c.Parts, p)
	}
	return c, nil
}

// ParseEntries parses one entry per non-empty line, with no sources.
func ParseEntries(input string) ([]apihistory.Entry, error) {
	var out []apihistory.Entry
	for _, line := range strings.Split(input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		c, err := ParseContent(line)
		if err != nil {
			return nil, err
		}
		out = append(out, apihistory.Entry{Content: c, PartSource: make([]int, len(c.Parts))})
	}
	return out, nil
}

// ParseRecords parses one record per non-empty line into transcript events,
// enveloped exactly as the codec envelopes them.
func ParseRecords(input string) ([]events.Event, error) {
	var out []events.Event
	n := 0
	for _, line := range strings.Split(input, "\n") {
		n++
		if strings.TrimSpace(line) == "" {
			continue
		}
		rec, err := parseRecord(line)
		if err != nil {
			return nil, fmt.Errorf("histtest: line %d: %w", n, err)
		}
		out = append(out, qwen.Envelope(rec, events.Position{Line: n}))
	}
	return out, nil
}

func parseRecord(line string) (*qwen.Record, error) {
	head, body, hasBody := strings.Cut(line, " : ")
	f := strings.Fields(head)
	if len(f) < 2 {
		return nil, fmt.Errorf("want <uuid> <type>[/<subtype>], got %q", line)
	}
	r := &qwen.Record{UUID: f[0]}
	r.Type, r.Subtype, r.HasSubtype = strings.Cut(f[1], "/")
	kv := map[string]string{}
	for _, a := range f[2:] {
		k, v, _ := strings.Cut(a, "=")
		kv[k] = v
	}
	for k, v := range kv {
		switch k {
		case "prov":
			r.Provenance = v
		case "delivered":
			r.DeliveredTurn = true
		case "bg":
			r.HasBackground = true
		case "prompt":
			r.PromptID = v
		case "daemon":
			r.DaemonPromptID = v
		case "goal":
			g := strings.Split(v, "/")
			if len(g) != 3 {
				return nil, fmt.Errorf("goal=%q: want goalId/revision/turnId", v)
			}
			r.GoalContext = &qwen.GoalContext{GoalID: g[0], Revision: g[1], TurnID: g[2]}
		case "completed", "phase", "raw", "items", "sent", "tool", "result", "state", "cancelledAt", "endedAt":
		default:
			return nil, fmt.Errorf("unknown key %q", k)
		}
	}
	switch r.Subtype {
	case qwen.SubtypeChatCompression:
		c := &qwen.Compression{HasHistory: hasBody}
		if v, ok := kv["completed"]; ok && v != "" {
			c.CompletedToolCallIDs = strings.Split(v, ",")
		}
		if hasBody {
			for _, es := range strings.Split(body, " || ") {
				ct, err := ParseContent(es)
				if err != nil {
					return nil, err
				}
				c.History = append(c.History, ct)
			}
		}
		r.Compression = c
		return r, nil
	case qwen.SubtypeSlashCommand:
		s := &qwen.SlashCommand{Phase: kv["phase"], RawCommand: kv["raw"]}
		_, s.SentToModel = kv["sent"]
		if v, ok := kv["items"]; ok {
			s.HasOutputItems = true
			if v != "" {
				s.OutputItemTypes = strings.Split(v, ",")
			}
			s.OutputItemsLength = len(s.OutputItemTypes)
		}
		r.SlashCommand = s
	case qwen.SubtypeGoalTurnEnd:
		r.GoalTurnEnd = &qwen.GoalTurnEnd{ToolCallID: kv["tool"]}
	case qwen.SubtypeTurnResult:
		t := &qwen.TurnResult{PromptID: kv["result"], State: kv["state"], EndedAt: kv["endedAt"]}
		if v, ok := kv["cancelledAt"]; ok {
			t.HasCancelledAt, t.CancelledAt = true, v
		}
		r.TurnResult = t
	}
	if hasBody && r.Type != qwen.TypeSystem {
		c, err := ParseContent(body)
		if err != nil {
			return nil, err
		}
		r.Message = &c
	}
	return r, nil
}
