package dshrecovery

import (
	"encoding/json"
)

// The message checks are dsh-session 0.1.0-rc.8's assertMessageEventShape,
// applied after dsh-session-persistence's legacy upgrades
// (migrateLegacyMessageEvent, migrateLegacySteeringEvent): a log the package
// refuses on load is refused here, so recovery never writes closers onto it.

type message struct {
	ID      *string                    `json:"id"`
	Role    *string                    `json:"role"`
	Source  map[string]json.RawMessage `json:"source"`
	Content json.RawMessage            `json:"content"`
}

func decodeMessage(raw json.RawMessage) (message, bool) {
	var m message
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return m, false
	}
	return m, true
}

func sourceKind(m message) (string, bool) {
	k, ok := jsString(m.Source["kind"])
	return k, ok && k != ""
}

func contentArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &a) != nil {
		return nil, false
	}
	return a, true
}

func shape(m message, role string) error {
	if m.ID == nil || *m.ID == "" {
		return corrupt("%s lacks an identified message", role)
	}
	if m.Role == nil || *m.Role != role {
		return corrupt("message must have role %q", role)
	}
	if m.Source == nil {
		return corrupt("message has invalid source")
	}
	if _, ok := sourceKind(m); !ok {
		return corrupt("message has invalid source")
	}
	if _, ok := contentArray(m.Content); !ok {
		return corrupt("message has invalid content")
	}
	return nil
}

func userMessage(r recordData) error {
	d, err := dataObject(r.data())
	if err != nil {
		return corrupt("user/message lacks an identified message")
	}
	if r.kind() == "steering/message" {
		if w, ok := d["message"]; ok && len(w) > 0 && w[0] == '{' && onlyKeys(d, "turn", "message") && safeRaw(d["turn"]) {
			m, _ := decodeMessage(w)
			return shape(m, "user")
		}
		if !safeRaw(d["turn"]) || !onlyKeys(d, "turn", "content", "source") {
			return corrupt("malformed pre-react-loop steering/message")
		}
		m, _ := decodeMessage(r.data())
		id, role := "legacy", "user"
		m.ID, m.Role = &id, &role
		return shape(m, "user")
	}
	m, ok := decodeMessage(r.data())
	if !ok {
		return corrupt("user/message lacks an identified message")
	}
	_, hasID := d["id"]
	_, hasRole := d["role"]
	_, hasMsg := d["message"]
	_, hasContent := d["content"]
	_, hasSource := d["source"]
	if !hasID && !hasRole && !hasMsg && hasContent && hasSource {
		id, role := "legacy", "user" // migrateLegacyMessageEvent mints both
		m.ID, m.Role = &id, &role
	}
	return shape(m, "user")
}

// assistantMessage checks the shape and returns data and the content blocks
// interruptedTurnClosers scans for tool calls.
func assistantMessage(raw []byte) (map[string]json.RawMessage, []json.RawMessage, error) {
	d, err := dataObject(raw)
	if err != nil {
		return nil, nil, corrupt("assistant/message lacks an identified message")
	}
	w, hasMsg := d["message"]
	_, hasContent := d["content"]
	prov, hasProv := d["provenance"]
	var m message
	if !hasMsg && hasContent && hasProv {
		// Legacy: the message is built from content and provenance, with the
		// source {...provenance, kind: 'model'}.
		id, role := "legacy", "assistant"
		m = message{ID: &id, Role: &role, Content: d["content"], Source: map[string]json.RawMessage{}}
		if len(prov) > 0 && prov[0] == '{' {
			_ = json.Unmarshal(prov, &m.Source)
		}
		m.Source["kind"] = json.RawMessage(`"model"`)
	} else {
		var ok bool
		if m, ok = decodeMessage(w); !ok {
			return nil, nil, corrupt("assistant/message lacks an identified message")
		}
	}
	if err := shape(m, "assistant"); err != nil {
		return nil, nil, err
	}
	if k, _ := sourceKind(m); k != "model" || !providerModel(m.Source) {
		return nil, nil, corrupt("assistant/message message must have model source")
	}
	content, _ := contentArray(m.Content)
	return d, content, nil
}

// toolResult checks the shape and returns the call id it answers.
func toolResult(raw []byte) (string, error) {
	d, err := dataObject(raw)
	if err != nil {
		return "", corrupt("tool/result lacks an identified message")
	}
	_, hasMsg := d["message"]
	_, hasCall := d["callId"]
	_, hasContent := d["content"]
	_, hasErr := d["isError"]
	if !hasMsg && hasCall && hasContent && hasErr {
		// Legacy: {callId, content, isError} becomes one tool-result block
		// whose source is {kind:'tool', callId}.
		id, ok := jsString(d["callId"])
		if !ok || id == "" {
			return "", corrupt("tool/result message must have tool source")
		}
		if _, ok := contentArray(d["content"]); !ok {
			return "", corrupt("tool/result message must contain one tool-result block")
		}
		return id, nil
	}
	m, ok := decodeMessage(d["message"])
	if !ok {
		return "", corrupt("tool/result lacks an identified message")
	}
	if err := shape(m, "user"); err != nil {
		return "", err
	}
	k, _ := sourceKind(m)
	callID, ok := jsString(m.Source["callId"])
	if k != "tool" || !ok || callID == "" {
		return "", corrupt("tool/result message must have tool source")
	}
	blocks, _ := contentArray(m.Content)
	var b struct {
		Type       *string         `json:"type"`
		ToolCallID json.RawMessage `json:"toolCallId"`
		Content    json.RawMessage `json:"content"`
	}
	if len(blocks) != 1 || len(blocks[0]) == 0 || blocks[0][0] != '{' || json.Unmarshal(blocks[0], &b) != nil ||
		b.Type == nil || *b.Type != "tool-result" {
		return "", corrupt("tool/result message must contain one tool-result block")
	}
	if _, ok := contentArray(b.Content); !ok {
		return "", corrupt("tool/result message must contain one tool-result block")
	}
	if id, ok := jsString(b.ToolCallID); !ok || id != callID {
		return "", corrupt("tool/result message has mismatched tool call ids")
	}
	return callID, nil
}

func providerModel(src map[string]json.RawMessage) bool {
	p, ok1 := jsString(src["provider"])
	m, ok2 := jsString(src["model"])
	return ok1 && ok2 && p != "" && m != ""
}

// requestHeader is assertCurrentLlmShape and assertSupportedRequestHeader for
// request/header: a provider/model config, a non-empty string
// reasoningEffort when present, adapter-default markers only for set fields,
// and not the retired reason "fallback".
func requestHeader(raw []byte) error {
	d, err := dataObject(raw)
	if err != nil {
		return corrupt("request/header lacks provider/model")
	}
	if r, ok := jsString(d["reason"]); ok && r == "fallback" {
		return corrupt(`unsupported legacy request/header reason "fallback"`)
	}
	var h map[string]json.RawMessage
	if hr := d["header"]; len(hr) == 0 || hr[0] != '{' || json.Unmarshal(hr, &h) != nil {
		return corrupt("request/header lacks provider/model")
	}
	var cfg map[string]json.RawMessage
	if c := h["config"]; len(c) == 0 || c[0] != '{' || json.Unmarshal(c, &cfg) != nil || !providerModel(cfg) {
		return corrupt("request/header lacks provider/model")
	}
	if re, ok := cfg["reasoningEffort"]; ok {
		if s, isStr := jsString(re); !isStr || s == "" {
			return corrupt("request/header has an invalid reasoningEffort")
		}
	}
	ad, ok := h["adapterDefaults"]
	if !ok {
		return nil
	}
	var defaults map[string]json.RawMessage
	if len(ad) == 0 || ad[0] != '{' || json.Unmarshal(ad, &defaults) != nil {
		return corrupt("request/header has invalid adapterDefaults")
	}
	for k, v := range defaults {
		if (k != "reasoningEffort" && k != "maxTokens") || string(v) != "true" {
			return corrupt("request/header has invalid adapterDefaults")
		}
		if _, set := cfg[k]; !set {
			return corrupt("request/header has invalid adapterDefaults")
		}
	}
	return nil
}

func onlyKeys(d map[string]json.RawMessage, allowed ...string) bool {
	if len(d) != len(allowed) {
		return false
	}
	for _, k := range allowed {
		if _, ok := d[k]; !ok {
			return false
		}
	}
	return true
}

func safeRaw(raw json.RawMessage) bool {
	var v float64
	return len(raw) > 0 && raw[0] != '"' && json.Unmarshal(raw, &v) == nil && safe(v)
}

func safeAtLeast1(raw json.RawMessage) bool {
	var v float64
	return safeRaw(raw) && json.Unmarshal(raw, &v) == nil && v >= 1
}

// legacyTurnStart checks the pre-react-loop turn/start {turn, trigger} that
// the package upgrades by dropping trigger.
func legacyTurnStart(d map[string]json.RawMessage) error {
	var trig map[string]json.RawMessage
	t := d["trigger"]
	if !safeAtLeast1(d["turn"]) || !onlyKeys(d, "turn", "trigger") || len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &trig) != nil {
		return corrupt("malformed pre-react-loop turn/start")
	}
	if k, ok := jsString(trig["kind"]); !ok || k == "" {
		return corrupt("malformed pre-react-loop turn/start")
	}
	return nil
}

// turnEnd is migrateLegacyTurnEndEvent's validation, which every turn/end
// with object data passes through.
func turnEnd(d map[string]json.RawMessage) error {
	bad := corrupt("malformed pre-react-loop turn/end")
	var reason map[string]json.RawMessage
	r := d["reason"]
	if !safeAtLeast1(d["turn"]) || !onlyKeys(d, "turn", "reason") || len(r) == 0 || r[0] != '{' || json.Unmarshal(r, &reason) != nil {
		return bad
	}
	kind, ok := jsString(reason["kind"])
	if !ok {
		return bad
	}
	_, hasReason := reason["reason"]
	_, hasError := reason["error"]
	switch kind {
	case "completed", "blocked", "max-tokens", "interrupted", "disposed":
		if !onlyKeys(reason, "kind") {
			return bad
		}
	case "aborted":
		if !hasReason && !onlyKeys(reason, "kind") {
			return bad
		}
	case "error":
		if hasError {
			return nil
		}
		if !safeRaw(reason["step"]) || !nonNegRaw(reason["step"]) {
			return bad
		}
		var failure map[string]json.RawMessage
		if f := reason["failure"]; len(f) > 0 && f[0] == '{' && json.Unmarshal(f, &failure) == nil && onlyKeys(reason, "kind", "step", "failure") {
			if failureOK(failure) {
				return nil
			}
		}
		_, hasCode := reason["code"]
		if hasCode {
			if !onlyKeys(reason, "kind", "step", "message", "code") {
				return bad
			}
			if _, ok := jsString(reason["code"]); !ok {
				return bad
			}
		} else if !onlyKeys(reason, "kind", "step", "message") {
			return bad
		}
		if _, ok := jsString(reason["message"]); !ok {
			return bad
		}
	}
	return nil
}

func nonNegRaw(raw json.RawMessage) bool {
	var v float64
	return json.Unmarshal(raw, &v) == nil && v >= 0
}

func failureOK(f map[string]json.RawMessage) bool {
	for k := range f {
		switch k {
		case "message", "code", "status", "providerRetryAfterMs", "requestId":
		default:
			return false
		}
	}
	_, okM := jsString(f["message"])
	_, okC := jsString(f["code"])
	if !okM || !okC {
		return false
	}
	for _, k := range []string{"status", "providerRetryAfterMs"} {
		if v, ok := f[k]; ok && (len(v) == 0 || v[0] == '"' || v[0] == '{' || v[0] == '[' || v[0] == 't' || v[0] == 'f' || v[0] == 'n') {
			return false
		}
	}
	if v, ok := f["requestId"]; ok {
		if _, isStr := jsString(v); !isStr {
			return false
		}
	}
	return true
}
