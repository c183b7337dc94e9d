package dsh

import (
	"encoding/json"
)

// The v1 event types (dsh `SessionEventMap`).
const (
	TypeTurnStart        = "turn/start"
	TypeTurnEnd          = "turn/end"
	TypeStepStart        = "step/start"
	TypeStepEnd          = "step/end"
	TypeUserMessage      = "user/message"
	TypeContextMessage   = "context/message"
	TypeAssistantChunk   = "assistant/chunk"
	TypeAssistantMessage = "assistant/message"
	TypeToolCall         = "tool/call"
	TypeToolResult       = "tool/result"
	TypeSteeringMessage  = "steering/message"
	TypeUsage            = "usage"
	TypeError            = "error"
)

// Payload is the typed data of one event. AppendJSON writes it with the key
// order dsh's code constructs it in, so a record built here serializes to the
// bytes dsh would write.
type Payload interface {
	EventType() string
	Describe() string
	AppendJSON(dst []byte) []byte
}

// TurnStart opens a turn.
type TurnStart struct {
	Turn    int64   `json:"turn"`
	Trigger Trigger `json:"trigger"`
}

// TurnEnd closes a turn.
type TurnEnd struct {
	Turn   int64  `json:"turn"`
	Reason Reason `json:"reason"`
}

// StepStart opens a model step inside a turn.
type StepStart struct {
	Turn int64 `json:"turn"`
	Step int64 `json:"step"`
}

// StepEnd closes a step.
type StepEnd struct {
	Turn int64 `json:"turn"`
	Step int64 `json:"step"`
}

// UserMessage is a queued message; Source says whether a person typed it.
type UserMessage struct {
	Content []Block `json:"content"`
	Source  Source  `json:"source"`
}

// ContextMessage is host-injected context (for example a background task notice).
type ContextMessage struct {
	Content []Block `json:"content"`
	Source  Source  `json:"source"`
}

// AssistantChunk is one raw stream chunk, persisted verbatim so seq stays contiguous.
type AssistantChunk struct {
	Turn  int64 `json:"turn"`
	Step  int64 `json:"step"`
	Chunk Chunk `json:"chunk"`
}

// AssistantMessage is the model's complete message for a step; its tool-call
// blocks are the calls a crash can leave unanswered.
type AssistantMessage struct {
	Turn    int64   `json:"turn"`
	Step    int64   `json:"step"`
	Content []Block `json:"content"`
}

// ToolCall records that a tool is about to run; Arguments is the raw JSON string.
type ToolCall struct {
	Turn      int64  `json:"turn"`
	Step      int64  `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolError names why a tool result is an error.
type ToolError struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// ToolResult answers a tool call.
type ToolResult struct {
	Turn    int64      `json:"turn"`
	Step    int64      `json:"step"`
	CallID  string     `json:"callId"`
	Content []Block    `json:"content"`
	IsError bool       `json:"isError"`
	Error   *ToolError `json:"error,omitempty"`
}

// SteeringMessage is a message queued into a running turn.
type SteeringMessage struct {
	Turn    int64   `json:"turn"`
	Content []Block `json:"content"`
	Source  Source  `json:"source"`
}

// UsageEvent reports a step's token usage.
type UsageEvent struct {
	Turn  int64 `json:"turn"`
	Step  int64 `json:"step"`
	Usage Usage `json:"usage"`
}

// ErrorEvent is a failure inside a turn.
type ErrorEvent struct {
	Turn    int64   `json:"turn"`
	Step    int64   `json:"step"`
	Message string  `json:"message"`
	Code    *string `json:"code,omitempty"`
}

// Generic is an event of a type outside the v1 vocabulary (the map is
// merge-extensible); its data is kept verbatim.
type Generic struct {
	Type string
	Data json.RawMessage
}

// Invalid is a known event type whose data does not have the v1 shape.
type Invalid struct {
	Type   string
	Reason string
	Data   json.RawMessage
}

func (*TurnStart) EventType() string        { return TypeTurnStart }
func (*TurnEnd) EventType() string          { return TypeTurnEnd }
func (*StepStart) EventType() string        { return TypeStepStart }
func (*StepEnd) EventType() string          { return TypeStepEnd }
func (*UserMessage) EventType() string      { return TypeUserMessage }
func (*ContextMessage) EventType() string   { return TypeContextMessage }
func (*AssistantChunk) EventType() string   { return TypeAssistantChunk }
func (*AssistantMessage) EventType() string { return TypeAssistantMessage }
func (*ToolCall) EventType() string         { return TypeToolCall }
func (*ToolResult) EventType() string       { return TypeToolResult }
func (*SteeringMessage) EventType() string  { return TypeSteeringMessage }
func (*UsageEvent) EventType() string       { return TypeUsage }
func (*ErrorEvent) EventType() string       { return TypeError }
func (g *Generic) EventType() string        { return g.Type }
func (v *Invalid) EventType() string        { return v.Type }

func turnStep(turn, step int64) string { return "turn=" + itoa(turn) + " step=" + itoa(step) }

func (p *TurnStart) Describe() string {
	s := "turn=" + itoa(p.Turn) + " trigger=" + p.Trigger.Kind
	if p.Trigger.Source != nil {
		s += "/" + p.Trigger.Source.describe()
	}
	return s
}
func (p *TurnEnd) Describe() string   { return "turn=" + itoa(p.Turn) + " reason=" + p.Reason.describe() }
func (p *StepStart) Describe() string { return turnStep(p.Turn, p.Step) }
func (p *StepEnd) Describe() string   { return turnStep(p.Turn, p.Step) }
func (p *UserMessage) Describe() string {
	return "source=" + p.Source.describe() + " content=" + describeBlocks(p.Content)
}
func (p *ContextMessage) Describe() string {
	return "source=" + p.Source.describe() + " content=" + describeBlocks(p.Content)
}
func (p *AssistantChunk) Describe() string {
	return turnStep(p.Turn, p.Step) + " chunk=" + p.Chunk.describe()
}
func (p *AssistantMessage) Describe() string {
	return turnStep(p.Turn, p.Step) + " content=" + describeBlocks(p.Content)
}
func (p *ToolCall) Describe() string {
	return turnStep(p.Turn, p.Step) + " call=" + p.CallID + " name=" + p.Name + " args=" + quote(p.Arguments)
}
func (p *ToolResult) Describe() string {
	s := turnStep(p.Turn, p.Step) + " call=" + p.CallID
	if p.IsError {
		s += " isError"
	}
	if p.Error != nil {
		s += " error=" + p.Error.Name + "/" + p.Error.Code
	}
	return s + " content=" + describeBlocks(p.Content)
}
func (p *SteeringMessage) Describe() string {
	return "turn=" + itoa(p.Turn) + " source=" + p.Source.describe() + " content=" + describeBlocks(p.Content)
}
func (p *UsageEvent) Describe() string { return turnStep(p.Turn, p.Step) + " " + p.Usage.describe() }
func (p *ErrorEvent) Describe() string {
	s := turnStep(p.Turn, p.Step) + " message=" + quote(p.Message)
	if p.Code != nil {
		s += " code=" + *p.Code
	}
	return s
}
func (g *Generic) Describe() string { return "data=" + itoa(int64(len(g.Data))) + "B" }
func (v *Invalid) Describe() string { return "invalid: " + v.Reason }
