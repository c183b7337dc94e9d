package dsh

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

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
