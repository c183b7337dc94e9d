package dsh

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events"
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

// Source is a MessageSource: {kind:'user'} | {kind:'plugin', plugin} | {kind:'agent', agentId}.
type Source struct {
	Kind    string `json:"kind"`
	Plugin  string `json:"plugin,omitempty"`
	AgentID string `json:"agentId,omitempty"`
}

// IsUser reports whether the message was typed by the person at the keyboard.
func (s Source) IsUser() bool { return s.Kind == "user" }

func (s Source) describe() string {
	switch s.Kind {
	case "plugin":
		return "plugin:" + s.Plugin
	case "agent":
		return "agent:" + s.AgentID
	}
	return s.Kind
}

func (s Source) appendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.str(&dst, "kind", s.Kind)
	switch s.Kind {
	case "plugin":
		w.str(&dst, "plugin", s.Plugin)
	case "agent":
		w.str(&dst, "agentId", s.AgentID)
	}
	return w.end(dst)
}

// Trigger is a TurnTrigger: message (with source), continuation, or injection (with source).
type Trigger struct {
	Kind   string  `json:"kind"`
	Source *Source `json:"source,omitempty"`
}

// Reason is a TurnEndReason. Kind is completed, aborted (Reason), error
// (Message, Code), disposed, max-tokens, or interrupted — the last one is
// only ever synthesized by crash repair.
type Reason struct {
	Kind    string  `json:"kind"`
	Reason  *string `json:"reason,omitempty"`
	Message *string `json:"message,omitempty"`
	Code    *string `json:"code,omitempty"`
}

func (r Reason) describe() string {
	s := r.Kind
	if r.Reason != nil {
		s += "(" + quote(*r.Reason) + ")"
	}
	if r.Message != nil {
		s += "(" + quote(*r.Message)
		if r.Code != nil {
			s += " code=" + *r.Code
		}
		s += ")"
	}
	return s
}

func (r Reason) appendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.str(&dst, "kind", r.Kind)
	w.optStr(&dst, "reason", r.Reason)
	w.optStr(&dst, "message", r.Message)
	w.optStr(&dst, "code", r.Code)
	return w.end(dst)
}

// Block is a ContentBlock: text, reasoning, tool-call, tool-result or image.
// Cache and a tool-result block's Content are kept verbatim.
type Block struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ID         string          `json:"id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Arguments  string          `json:"arguments,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
	IsError    *bool           `json:"isError,omitempty"`
	URL        string          `json:"url,omitempty"`
	MimeType   *string         `json:"mimeType,omitempty"`
	Cache      json.RawMessage `json:"cache,omitempty"`
}

func (b Block) describe() string {
	switch b.Type {
	case "text", "reasoning":
		return b.Type + " " + quote(b.Text)
	case "tool-call":
		return "tool-call " + b.ID + " " + b.Name
	case "tool-result":
		s := "tool-result " + b.ToolCallID
		if b.IsError != nil && *b.IsError {
			s += " error"
		}
		return s
	case "image":
		return "image " + quote(b.URL)
	}
	return b.Type
}

func (b Block) appendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.str(&dst, "type", b.Type)
	switch b.Type {
	case "text", "reasoning":
		w.str(&dst, "text", b.Text)
	case "tool-call":
		w.str(&dst, "id", b.ID)
		w.str(&dst, "name", b.Name)
		w.str(&dst, "arguments", b.Arguments)
	case "tool-result":
		w.str(&dst, "toolCallId", b.ToolCallID)
		w.raw(&dst, "content", b.Content)
		if b.IsError != nil {
			w.boolean(&dst, "isError", *b.IsError)
		}
	case "image":
		w.str(&dst, "url", b.URL)
		w.optStr(&dst, "mimeType", b.MimeType)
	}
	if b.Type != "reasoning" && b.Type != "tool-call" && len(b.Cache) > 0 {
		w.raw(&dst, "cache", b.Cache)
	}
	return w.end(dst)
}

func validateBlocks(bs []Block) error {
	for i, b := range bs {
		if b.Type == "" {
			return fmt.Errorf("content[%d] has no type", i)
		}
		if b.Type == "tool-call" && b.ID == "" {
			return fmt.Errorf("content[%d] tool-call has no id", i)
		}
	}
	return nil
}

func describeBlocks(bs []Block) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.describe()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func appendBlocks(dst []byte, bs []Block) []byte {
	dst = append(dst, '[')
	for i, b := range bs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = b.appendJSON(dst)
	}
	return append(dst, ']')
}

// Usage is a TokenUsage.
type Usage struct {
	InputTokens      int64  `json:"inputTokens"`
	OutputTokens     int64  `json:"outputTokens"`
	CacheReadTokens  *int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  *int64 `json:"reasoningTokens,omitempty"`
}

func (u Usage) describe() string {
	return "in=" + strconv.FormatInt(u.InputTokens, 10) + " out=" + strconv.FormatInt(u.OutputTokens, 10)
}

func (u Usage) appendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "inputTokens", u.InputTokens)
	w.num(&dst, "outputTokens", u.OutputTokens)
	w.optNum(&dst, "cacheReadTokens", u.CacheReadTokens)
	w.optNum(&dst, "cacheWriteTokens", u.CacheWriteTokens)
	w.optNum(&dst, "reasoningTokens", u.ReasoningTokens)
	return w.end(dst)
}

// FinishReason ends a model stream: stop, tool-calls, max-tokens, aborted,
// or error (Message, Code).
type FinishReason struct {
	Kind    string  `json:"kind"`
	Message *string `json:"message,omitempty"`
	Code    *string `json:"code,omitempty"`
}

// Chunk is a StreamChunk: block-start, text-delta, reasoning-delta,
// tool-call-delta, block-end, usage or finish.
type Chunk struct {
	Type           string        `json:"type"`
	Index          int64         `json:"index"`
	BlockType      string        `json:"blockType,omitempty"`
	Text           string        `json:"text,omitempty"`
	ID             string        `json:"id,omitempty"`
	Name           *string       `json:"name,omitempty"`
	ArgumentsDelta string        `json:"argumentsDelta,omitempty"`
	Block          *Block        `json:"block,omitempty"`
	Usage          *Usage        `json:"usage,omitempty"`
	Reason         *FinishReason `json:"reason,omitempty"`
}

func (c Chunk) describe() string {
	switch c.Type {
	case "block-start":
		return "block-start#" + itoa(c.Index) + " " + c.BlockType
	case "text-delta", "reasoning-delta":
		return c.Type + "#" + itoa(c.Index) + " " + quote(c.Text)
	case "tool-call-delta":
		s := "tool-call-delta#" + itoa(c.Index) + " " + c.ID
		if c.Name != nil {
			s += " " + *c.Name
		}
		return s + " " + quote(c.ArgumentsDelta)
	case "block-end":
		s := "block-end#" + itoa(c.Index)
		if c.Block != nil {
			s += " " + c.Block.describe()
		}
		return s
	case "usage":
		if c.Usage != nil {
			return "usage " + c.Usage.describe()
		}
	case "finish":
		if c.Reason != nil {
			s := "finish " + c.Reason.Kind
			if c.Reason.Message != nil {
				s += " " + quote(*c.Reason.Message)
			}
			return s
		}
	}
	return c.Type
}

func (c Chunk) appendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.str(&dst, "type", c.Type)
	switch c.Type {
	case "block-start":
		w.num(&dst, "index", c.Index)
		w.str(&dst, "blockType", c.BlockType)
	case "text-delta", "reasoning-delta":
		w.num(&dst, "index", c.Index)
		w.str(&dst, "text", c.Text)
	case "tool-call-delta":
		w.num(&dst, "index", c.Index)
		w.str(&dst, "id", c.ID)
		w.optStr(&dst, "name", c.Name)
		w.str(&dst, "argumentsDelta", c.ArgumentsDelta)
	case "block-end":
		w.num(&dst, "index", c.Index)
		if c.Block != nil {
			w.key(&dst, "block")
			dst = c.Block.appendJSON(dst)
		}
	case "usage":
		if c.Usage != nil {
			w.key(&dst, "usage")
			dst = c.Usage.appendJSON(dst)
		}
	case "finish":
		if c.Reason != nil {
			w.key(&dst, "reason")
			var r obj
			r.begin(&dst)
			r.str(&dst, "kind", c.Reason.Kind)
			r.optStr(&dst, "message", c.Reason.Message)
			r.optStr(&dst, "code", c.Reason.Code)
			dst = r.end(dst)
		}
	}
	return w.end(dst)
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

func (p *TurnStart) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.key(&dst, "trigger")
	var t obj
	t.begin(&dst)
	t.str(&dst, "kind", p.Trigger.Kind)
	if p.Trigger.Source != nil {
		t.key(&dst, "source")
		dst = p.Trigger.Source.appendJSON(dst)
	}
	dst = t.end(dst)
	return w.end(dst)
}

func (p *TurnEnd) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.key(&dst, "reason")
	dst = p.Reason.appendJSON(dst)
	return w.end(dst)
}

func appendTurnStep(dst []byte, turn, step int64) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", turn)
	w.num(&dst, "step", step)
	return w.end(dst)
}

func (p *StepStart) AppendJSON(dst []byte) []byte { return appendTurnStep(dst, p.Turn, p.Step) }
func (p *StepEnd) AppendJSON(dst []byte) []byte   { return appendTurnStep(dst, p.Turn, p.Step) }

func appendMessage(dst []byte, content []Block, src Source) []byte {
	var w obj
	w.begin(&dst)
	w.key(&dst, "content")
	dst = appendBlocks(dst, content)
	w.key(&dst, "source")
	dst = src.appendJSON(dst)
	return w.end(dst)
}

func (p *UserMessage) AppendJSON(dst []byte) []byte { return appendMessage(dst, p.Content, p.Source) }
func (p *ContextMessage) AppendJSON(dst []byte) []byte {
	return appendMessage(dst, p.Content, p.Source)
}

func (p *AssistantChunk) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.num(&dst, "step", p.Step)
	w.key(&dst, "chunk")
	dst = p.Chunk.appendJSON(dst)
	return w.end(dst)
}

func (p *AssistantMessage) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.num(&dst, "step", p.Step)
	w.key(&dst, "content")
	dst = appendBlocks(dst, p.Content)
	return w.end(dst)
}

func (p *ToolCall) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.num(&dst, "step", p.Step)
	w.str(&dst, "callId", p.CallID)
	w.str(&dst, "name", p.Name)
	w.str(&dst, "arguments", p.Arguments)
	return w.end(dst)
}

func (p *ToolResult) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.num(&dst, "step", p.Step)
	w.str(&dst, "callId", p.CallID)
	w.key(&dst, "content")
	dst = appendBlocks(dst, p.Content)
	w.boolean(&dst, "isError", p.IsError)
	if p.Error != nil {
		w.key(&dst, "error")
		var e obj
		e.begin(&dst)
		e.str(&dst, "name", p.Error.Name)
		e.str(&dst, "code", p.Error.Code)
		dst = e.end(dst)
	}
	return w.end(dst)
}

func (p *SteeringMessage) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.key(&dst, "content")
	dst = appendBlocks(dst, p.Content)
	w.key(&dst, "source")
	dst = p.Source.appendJSON(dst)
	return w.end(dst)
}

func (p *UsageEvent) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.num(&dst, "step", p.Step)
	w.key(&dst, "usage")
	dst = p.Usage.appendJSON(dst)
	return w.end(dst)
}

func (p *ErrorEvent) AppendJSON(dst []byte) []byte {
	var w obj
	w.begin(&dst)
	w.num(&dst, "turn", p.Turn)
	w.num(&dst, "step", p.Step)
	w.str(&dst, "message", p.Message)
	w.optStr(&dst, "code", p.Code)
	return w.end(dst)
}

func (g *Generic) AppendJSON(dst []byte) []byte { return append(dst, g.Data...) }
func (v *Invalid) AppendJSON(dst []byte) []byte { return append(dst, v.Data...) }

// NewRecord builds a record whose data is p serialized in dsh's key order.
func NewRecord(seq, time int64, p Payload) Record {
	return Record{Type: p.EventType(), Seq: seq, Time: time, Data: p.AppendJSON(nil)}
}

// DecodePayload decodes data as the v1 body of typ. Unknown types decode as
// *Generic and never fail; a known type with data of the wrong shape fails
// with ErrMalformedData. Absent optional members decode as zero values.
func DecodePayload(typ string, data json.RawMessage) (Payload, error) {
	p, ok := fastDecodePayload(typ, data)
	if !ok {
		return decodePayloadJSON(typ, data)
	}
	if err := validate(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedData, typ, err)
	}
	return p, nil
}

// decodePayloadJSON is DecodePayload through encoding/json: the reference
// the fast path must agree with, and the path that words every error.
func decodePayloadJSON(typ string, data json.RawMessage) (Payload, error) {
	var p Payload
	switch typ {
	case TypeTurnStart:
		p = new(TurnStart)
	case TypeTurnEnd:
		p = new(TurnEnd)
	case TypeStepStart:
		p = new(StepStart)
	case TypeStepEnd:
		p = new(StepEnd)
	case TypeUserMessage:
		p = new(UserMessage)
	case TypeContextMessage:
		p = new(ContextMessage)
	case TypeAssistantChunk:
		p = new(AssistantChunk)
	case TypeAssistantMessage:
		p = new(AssistantMessage)
	case TypeToolCall:
		p = new(ToolCall)
	case TypeToolResult:
		p = new(ToolResult)
	case TypeSteeringMessage:
		p = new(SteeringMessage)
	case TypeUsage:
		p = new(UsageEvent)
	case TypeError:
		p = new(ErrorEvent)
	default:
		return &Generic{Type: typ, Data: bytes.Clone(data)}, nil
	}
	if err := strictUnmarshal(data, p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedData, typ, err)
	}
	if err := validate(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedData, typ, err)
	}
	return p, nil
}

// validate checks the members the projections key on; everything else is
// only type-checked by the JSON decoder.
func validate(p Payload) error {
	switch p := p.(type) {
	case *TurnStart:
		if p.Trigger.Kind == "" {
			return fmt.Errorf("trigger has no kind")
		}
	case *TurnEnd:
		if p.Reason.Kind == "" {
			return fmt.Errorf("reason has no kind")
		}
	case *UserMessage:
		return validateBlocks(p.Content)
	case *ContextMessage:
		return validateBlocks(p.Content)
	case *SteeringMessage:
		return validateBlocks(p.Content)
	case *AssistantMessage:
		return validateBlocks(p.Content)
	case *ToolResult:
		if p.CallID == "" {
			return fmt.Errorf("no callId")
		}
		return validateBlocks(p.Content)
	case *ToolCall:
		if p.CallID == "" {
			return fmt.Errorf("no callId")
		}
	case *AssistantChunk:
		if p.Chunk.Type == "" {
			return fmt.Errorf("chunk has no type")
		}
	}
	return nil
}

// obj writes one JSON object member by member, in the order called.
type obj struct{ n int }

func (w *obj) begin(dst *[]byte) { *dst = append(*dst, '{') }
func (w *obj) end(dst []byte) []byte {
	return append(dst, '}')
}
func (w *obj) key(dst *[]byte, k string) {
	if w.n > 0 {
		*dst = append(*dst, ',')
	}
	w.n++
	*dst = events.AppendJSString(*dst, k)
	*dst = append(*dst, ':')
}
func (w *obj) str(dst *[]byte, k, v string) {
	w.key(dst, k)
	*dst = events.AppendJSString(*dst, v)
}
func (w *obj) optStr(dst *[]byte, k string, v *string) {
	if v != nil {
		w.str(dst, k, *v)
	}
}
func (w *obj) num(dst *[]byte, k string, v int64) {
	w.key(dst, k)
	*dst = strconv.AppendInt(*dst, v, 10)
}
func (w *obj) optNum(dst *[]byte, k string, v *int64) {
	if v != nil {
		w.num(dst, k, *v)
	}
}
func (w *obj) boolean(dst *[]byte, k string, v bool) {
	w.key(dst, k)
	*dst = strconv.AppendBool(*dst, v)
}
func (w *obj) raw(dst *[]byte, k string, v json.RawMessage) {
	w.key(dst, k)
	if len(v) == 0 {
		*dst = append(*dst, "null"...)
		return
	}
	*dst = append(*dst, v...)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// quote shortens long text so a Describe line stays one readable line; the
// byte length keeps two long texts with a shared prefix apart.
func quote(s string) string {
	const max = 48
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == max {
			return strconv.Quote(s[:i]+"…") + "(" + strconv.Itoa(len(s)) + "B)"
		}
		n++
	}
	return strconv.Quote(s)
}
