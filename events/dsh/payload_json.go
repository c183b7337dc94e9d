package dsh

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events"
)

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
