package timeline

import (
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
)

// Kind classifies a timeline item. The set is closed and its names are part
// of the --json and HTML interfaces.
type Kind string

const (
	KindAdmission    Kind = "admission"    // ledger in_flight: a prompt was admitted
	KindTerminal     Kind = "terminal"     // ledger terminal, transcript turn_result, dsh turn/end
	KindPrompt       Kind = "prompt"       // a user prompt (any provenance but notification/cron)
	KindTurn         Kind = "turn"         // model output, dsh turn/start
	KindToolCall     Kind = "tool_call"    // the model asked for a tool
	KindToolResult   Kind = "tool_result"  // a tool answered
	KindNotification Kind = "notification" // host-injected notification or cron wake-up
	KindCompression  Kind = "compression"  // chat compression replaced the history
	KindSystem       Kind = "system"       // any other system record
)

// maxText bounds an item's text: the timeline is read by people, and a tool
// output of megabytes must not reach a terminal or a page.
const maxText = 120

// Item is one entry of the session timeline.
type Item struct {
	// Seq is the 1-based index of the event (Add call) that produced it.
	Seq    int           `json:"seq"`
	Stream events.Stream `json:"stream"`
	Line   int           `json:"line"`
	TimeMs int64         `json:"timeMs"`
	TimeOK bool          `json:"timeOK"`
	Kind   Kind          `json:"kind"`
	// Prompt is the prompt the item belongs to when the record names one
	// (ledger promptId, daemonPromptId, turn_result promptId); dsh: "turn N".
	Prompt string `json:"prompt,omitempty"`
	// Ref is the record's identity: a tool call id for calls and results,
	// otherwise the record uuid ("" when the format has none).
	Ref        string `json:"ref,omitempty"`
	Provenance string `json:"provenance,omitempty"`
	Text       string `json:"text"`
}

// Describe is the item's stable one-line form.
func (it Item) Describe() string {
	var b strings.Builder
	b.WriteString("#")
	b.WriteString(strconv.Itoa(it.Seq))
	b.WriteByte(' ')
	b.WriteString(string(it.Kind))
	b.WriteString(" ")
	b.WriteString(string(it.Stream))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(it.Line))
	if it.TimeOK {
		b.WriteString(" t=")
		b.WriteString(strconv.FormatInt(it.TimeMs, 10))
	}
	if it.Prompt != "" {
		b.WriteString(" prompt=")
		b.WriteString(it.Prompt)
	}
	if it.Ref != "" {
		b.WriteString(" ref=")
		b.WriteString(it.Ref)
	}
	if it.Provenance != "" {
		b.WriteString(" prov=")
		b.WriteString(it.Provenance)
	}
	if it.Text != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(it.Text))
	}
	return b.String()
}

// Timeline is the fold. The zero value is not usable; call New.
type Timeline struct {
	n     int
	items []Item
	// dshCalls are the tool calls a dsh assistant/message already put on
	// the timeline: dsh logs each call twice (the message's tool-call block,
	// then a tool/call event), and a reader wants it once.
	dshCalls map[string]bool
}

// New returns an empty timeline.
func New() *Timeline { return &Timeline{} }

// Len is the number of events added.
func (t *Timeline) Len() int { return t.n }

// Items returns every item so far, oldest first. The slice is shared; do not
// modify it.
func (t *Timeline) Items() []Item { return t.items }

// Describe is the whole timeline, one item per line.
func (t *Timeline) Describe() string {
	var b strings.Builder
	for _, it := range t.items {
		b.WriteString(it.Describe())
		b.WriteByte('\n')
	}
	return b.String()
}

// Forget drops the items kept so far (Items and Describe start over); Add
// still returns each event's items and dsh calls are still told apart. A
// reader that takes each event's items as they come (a streamed replay)
// calls it so the timeline keeps none: an item's strings can alias its
// record's.
func (t *Timeline) Forget() {
	clear(t.items)
	t.items = t.items[:0]
}

// Add folds one event and returns the items it produced (possibly none: a
// usage record or a streaming chunk is not a timeline item). Events of
// unknown streams or bodies produce nothing rather than an error, so a
// timeline never refuses evidence a decision accepted.
func (t *Timeline) Add(ev events.Event) []Item {
	t.n++
	start := len(t.items)
	base := Item{Seq: t.n, Stream: ev.Stream, Line: ev.Pos.Line, TimeMs: ev.Time.Ms, TimeOK: ev.Time.OK}
	if ev.Provenance != events.ProvenanceAbsent {
		base.Provenance = ev.Provenance.String()
	}
	switch body := ev.Body.(type) {
	case ledger.Record:
		t.addLedger(base, body)
	case *ledger.Record:
		if body != nil {
			t.addLedger(base, *body)
		}
	case *qwen.Record:
		if body != nil {
			t.addQwen(base, body)
		}
	case *dsh.EventBody:
		if body != nil {
			t.addDSH(base, body)
		}
	}
	return t.items[start:]
}

func (t *Timeline) push(base Item, kind Kind, prompt, ref, text string) {
	base.Kind, base.Prompt, base.Ref, base.Text = kind, prompt, ref, clip(text)
	t.items = append(t.items, base)
}

func (t *Timeline) addLedger(base Item, r ledger.Record) {
	base.Provenance = ""
	if r.InFlight {
		text := "admitted"
		if r.TailUUID != "" {
			text += ", marker " + r.TailUUID
		}
		t.push(base, KindAdmission, r.PromptID, "", text)
		return
	}
	text := string(r.Terminal)
	if r.Code != "" {
		text += " (" + r.Code + ")"
	}
	if r.StopReason != "" {
		text += " stop=" + r.StopReason
	}
	t.push(base, KindTerminal, r.PromptID, "", text)
}

func (t *Timeline) addQwen(base Item, r *qwen.Record) {
	prompt := r.DaemonPromptID
	switch r.Type {
	case qwen.TypeSystem:
		switch {
		case r.Subtype == qwen.SubtypeChatCompression:
			n := 0
			if r.Compression != nil {
				n = len(r.Compression.History)
			}
			t.push(base, KindCompression, prompt, r.UUID, "history compressed to "+strconv.Itoa(n)+" entries")
		case r.Subtype == qwen.SubtypeTurnResult && r.TurnResult != nil:
			text := "turn_result " + r.TurnResult.State
			if r.TurnResult.StopReason != "" {
				text += " stop=" + r.TurnResult.StopReason
			}
			t.push(base, KindTerminal, r.TurnResult.PromptID, r.UUID, text)
		case r.Subtype == qwen.SubtypeNotification || r.Subtype == qwen.SubtypeCron:
			t.push(base, KindNotification, prompt, r.UUID, notificationText(r))
		default:
			t.push(base, KindSystem, prompt, r.UUID, orSubtype(r))
		}
		return
	case qwen.TypeUser:
		if r.Subtype == qwen.SubtypeNotification || r.Subtype == qwen.SubtypeCron {
			t.push(base, KindNotification, prompt, r.UUID, notificationText(r))
			return
		}
		if r.Subtype != "" && r.Subtype != qwen.SubtypeMidTurnUserMessage {
			t.push(base, KindSystem, prompt, r.UUID, orSubtype(r))
			return
		}
	}
	// Messages: each part becomes its own item when it is a call or a
	// response, so a tool call is visible even inside a long model turn.
	var text []string
	if r.Message != nil {
		for _, p := range r.Message.Parts {
			switch p.Kind {
			case qwen.PartFunctionCall:
				t.push(base, KindToolCall, prompt, p.ID, p.Name)
			case qwen.PartFunctionResponse:
				t.push(base, KindToolResult, prompt, p.ID, p.Name)
			case qwen.PartText:
				if !p.Thought && strings.TrimSpace(p.Text) != "" {
					text = append(text, p.Text)
				}
			}
		}
	}
	switch r.Type {
	case qwen.TypeUser:
		t.push(base, KindPrompt, prompt, r.UUID, strings.Join(text, " "))
	case qwen.TypeAssistant:
		if len(text) > 0 {
			t.push(base, KindTurn, prompt, r.UUID, strings.Join(text, " "))
		}
	case qwen.TypeToolResult:
		// the functionResponse parts above are the items
	default:
		t.push(base, KindSystem, prompt, r.UUID, r.Type)
	}
}

func notificationText(r *qwen.Record) string {
	if r.Notification != nil && r.Notification.DisplayText != "" {
		return r.Notification.DisplayText
	}
	if r.Notification != nil && r.Notification.TaskID != "" {
		return r.Notification.TaskID + " " + r.Notification.TaskStatus
	}
	if r.Message != nil {
		var text []string
		for _, p := range r.Message.Parts {
			if p.Kind == qwen.PartText && !p.Thought && strings.TrimSpace(p.Text) != "" {
				text = append(text, p.Text)
			}
		}
		if len(text) > 0 {
			return strings.Join(text, " ")
		}
	}
	return orSubtype(r)
}

func orSubtype(r *qwen.Record) string {
	if r.Subtype != "" {
		return r.Type + "/" + r.Subtype
	}
	return r.Type
}

func (t *Timeline) addDSH(base Item, b *dsh.EventBody) {
	turn := func(n int64) string { return "turn " + strconv.FormatInt(n, 10) }
	switch p := b.Payload.(type) {
	case *dsh.TurnStart:
		t.push(base, KindTurn, turn(p.Turn), "", "turn/start trigger="+p.Trigger.Kind)
	case *dsh.TurnEnd:
		t.push(base, KindTerminal, turn(p.Turn), "", "turn/end "+p.Reason.Kind)
	case *dsh.UserMessage:
		kind := KindPrompt
		if base.Provenance == events.ProvenanceSystem.String() {
			kind = KindNotification
		}
		t.push(base, kind, "", "", blocksText(p.Content))
	case *dsh.SteeringMessage:
		t.push(base, KindPrompt, turn(p.Turn), "", blocksText(p.Content))
	case *dsh.ContextMessage:
		t.push(base, KindNotification, "", "", blocksText(p.Content))
	case *dsh.AssistantMessage:
		var text []string
		for _, blk := range p.Content {
			switch blk.Type {
			case "tool-call":
				if t.dshCalls == nil {
					t.dshCalls = map[string]bool{}
				}
				t.dshCalls[blk.ID] = true
				t.push(base, KindToolCall, turn(p.Turn), blk.ID, blk.Name)
			case "text":
				if strings.TrimSpace(blk.Text) != "" {
					text = append(text, blk.Text)
				}
			}
		}
		if len(text) > 0 {
			t.push(base, KindTurn, turn(p.Turn), "", strings.Join(text, " "))
		}
	case *dsh.ToolCall:
		if !t.dshCalls[p.CallID] {
			t.push(base, KindToolCall, turn(p.Turn), p.CallID, p.Name)
		}
	case *dsh.ToolResult:
		text := "ok"
		if p.IsError {
			text = "error"
			if p.Error != nil && p.Error.Name != "" {
				text += " " + p.Error.Name
			}
		}
		t.push(base, KindToolResult, turn(p.Turn), p.CallID, text)
	case *dsh.ErrorEvent:
		t.push(base, KindSystem, turn(p.Turn), "", "error "+p.Message)
	}
}

func blocksText(bs []dsh.Block) string {
	var text []string
	for _, b := range bs {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			text = append(text, b.Text)
		}
	}
	return strings.Join(text, " ")
}

// clip keeps text on one line and at most maxText runes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > maxText {
		return string(r[:maxText-1]) + "…"
	}
	return s
}
