package dshrecovery

// The message checks are dsh-session 0.1.0-rc.8's assertMessageEventShape,
// applied after dsh-session-persistence's legacy upgrades
// (migrateLegacyMessageEvent, migrateLegacySteeringEvent): a log the package
// refuses on load is refused here, so recovery never writes closers onto it.

// message is an identified message's members; id and role may be set by a
// legacy upgrade instead.
type message struct {
	id, role       []byte
	source         obj
	sourceOK       bool
	content        []byte
	idOver, roleOv string // minted by an upgrade
}

func decodeMessage(raw []byte) (message, bool) {
	o, ok := asObj(raw)
	if !ok {
		return message{}, false
	}
	m := message{id: o.get("id"), role: o.get("role"), content: o.get("content")}
	m.source, m.sourceOK = asObj(o.get("source"))
	return m, true
}

func (m message) idString() string {
	if m.idOver != "" {
		return m.idOver
	}
	s, _ := jsString(m.id)
	return s
}

func (m message) roleString() string {
	if m.roleOv != "" {
		return m.roleOv
	}
	s, _ := jsString(m.role)
	return s
}

func sourceKind(m message) (string, bool) {
	k, ok := jsString(m.source.get("kind"))
	return k, ok && k != ""
}

func contentArray(raw []byte) ([][]byte, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	return v0Array(raw)
}

func shape(m message, role string) error {
	if m.idString() == "" {
		return corrupt("%s lacks an identified message", role)
	}
	if m.roleString() != role {
		return corrupt("message must have role %q", role)
	}
	if !m.sourceOK {
		return corrupt("message has invalid source")
	}
	if _, ok := sourceKind(m); !ok {
		return corrupt("message has invalid source")
	}
	if _, ok := contentArray(m.content); !ok {
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
		if w := d.get("message"); len(w) > 0 && w[0] == '{' && onlyKeys(d, "turn", "message") && safeRaw(d.get("turn")) {
			m, _ := decodeMessage(w)
			return shape(m, "user")
		}
		if !safeRaw(d.get("turn")) || !onlyKeys(d, "turn", "content", "source") {
			return corrupt("malformed pre-react-loop steering/message")
		}
		m, _ := decodeMessage(r.data())
		m.idOver, m.roleOv = "legacy", "user"
		return shape(m, "user")
	}
	m, ok := decodeMessage(r.data())
	if !ok {
		return corrupt("user/message lacks an identified message")
	}
	if !d.has("id") && !d.has("role") && !d.has("message") && d.has("content") && d.has("source") {
		m.idOver, m.roleOv = "legacy", "user" // migrateLegacyMessageEvent mints both
	}
	return shape(m, "user")
}

// assistantMessage checks the shape and returns data and the content blocks
// interruptedTurnClosers scans for tool calls.
func assistantMessage(raw []byte) (obj, [][]byte, error) {
	d, err := dataObject(raw)
	if err != nil {
		return nil, nil, corrupt("assistant/message lacks an identified message")
	}
	var m message
	if !d.has("message") && d.has("content") && d.has("provenance") {
		// Legacy: the message is built from content and provenance, with the
		// source {...provenance, kind: 'model'}.
		m = message{content: d.get("content"), idOver: "legacy", roleOv: "assistant", sourceOK: true}
		prov, _ := asObj(d.get("provenance"))
		m.source = append(append(obj{}, prov...), v0Member("kind", `"model"`))
	} else {
		var ok bool
		if m, ok = decodeMessage(d.get("message")); !ok {
			return nil, nil, corrupt("assistant/message lacks an identified message")
		}
	}
	if err := shape(m, "assistant"); err != nil {
		return nil, nil, err
	}
	if k, _ := sourceKind(m); k != "model" || !providerModel(m.source) {
		return nil, nil, corrupt("assistant/message message must have model source")
	}
	content, _ := contentArray(m.content)
	return d, content, nil
}

// toolResult checks the shape and returns the call id it answers.
func toolResult(raw []byte) (string, error) {
	d, err := dataObject(raw)
	if err != nil {
		return "", corrupt("tool/result lacks an identified message")
	}
	if !d.has("message") && d.has("callId") && d.has("content") && d.has("isError") {
		// Legacy: {callId, content, isError} becomes one tool-result block
		// whose source is {kind:'tool', callId}.
		id, ok := jsString(d.get("callId"))
		if !ok || id == "" {
			return "", corrupt("tool/result message must have tool source")
		}
		if _, ok := contentArray(d.get("content")); !ok {
			return "", corrupt("tool/result message must contain one tool-result block")
		}
		return id, nil
	}
	m, ok := decodeMessage(d.get("message"))
	if !ok {
		return "", corrupt("tool/result lacks an identified message")
	}
	if err := shape(m, "user"); err != nil {
		return "", err
	}
	k, _ := sourceKind(m)
	callID, ok := jsString(m.source.get("callId"))
	if k != "tool" || !ok || callID == "" {
		return "", corrupt("tool/result message must have tool source")
	}
	blocks, _ := contentArray(m.content)
	if len(blocks) != 1 {
		return "", corrupt("tool/result message must contain one tool-result block")
	}
	b, ok := asObj(blocks[0])
	if t, _ := jsString(b.get("type")); !ok || t != "tool-result" {
		return "", corrupt("tool/result message must contain one tool-result block")
	}
	if _, ok := contentArray(b.get("content")); !ok {
		return "", corrupt("tool/result message must contain one tool-result block")
	}
	if id, ok := jsString(b.get("toolCallId")); !ok || id != callID {
		return "", corrupt("tool/result message has mismatched tool call ids")
	}
	return callID, nil
}

func providerModel(src obj) bool {
	p, ok1 := jsString(src.get("provider"))
	m, ok2 := jsString(src.get("model"))
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
	if r, ok := jsString(d.get("reason")); ok && r == "fallback" {
		return corrupt(`unsupported legacy request/header reason "fallback"`)
	}
	h, ok := asObj(d.get("header"))
	if !ok {
		return corrupt("request/header lacks provider/model")
	}
	cfg, ok := asObj(h.get("config"))
	if !ok || !providerModel(cfg) {
		return corrupt("request/header lacks provider/model")
	}
	if re := cfg.get("reasoningEffort"); re != nil {
		if s, isStr := jsString(re); !isStr || s == "" {
			return corrupt("request/header has an invalid reasoningEffort")
		}
	}
	ad := h.get("adapterDefaults")
	if ad == nil {
		return nil
	}
	defaults, ok := asObj(ad)
	if !ok {
		return corrupt("request/header has invalid adapterDefaults")
	}
	for _, m := range defaults {
		k := string(m.Key)
		if (k != "reasoningEffort" && k != "maxTokens") || string(defaults.get(k)) != "true" || !cfg.has(k) {
			return corrupt("request/header has invalid adapterDefaults")
		}
	}
	return nil
}

// onlyKeys is hasOnlyKeys with every key required: exactly these keys.
func onlyKeys(d obj, allowed ...string) bool {
	for _, m := range d {
		found := false
		for _, a := range allowed {
			found = found || string(m.Key) == a
		}
		if !found {
			return false
		}
	}
	for _, a := range allowed {
		if !d.has(a) {
			return false
		}
	}
	return true
}

// safeRaw: a number that is a safe integer (Number.isSafeInteger).
func safeRaw(raw []byte) bool {
	v, ok := numberOf(raw)
	return ok && safe(v)
}

func safeAtLeast1(raw []byte) bool {
	v, ok := numberOf(raw)
	return ok && safe(v) && v >= 1
}

// legacyTurnStart checks the pre-react-loop turn/start {turn, trigger} that
// the package upgrades by dropping trigger.
func legacyTurnStart(d obj) error {
	trig, ok := asObj(d.get("trigger"))
	if !safeAtLeast1(d.get("turn")) || !onlyKeys(d, "turn", "trigger") || !ok {
		return corrupt("malformed pre-react-loop turn/start")
	}
	if k, ok := jsString(trig.get("kind")); !ok || k == "" {
		return corrupt("malformed pre-react-loop turn/start")
	}
	return nil
}

// turnEnd is migrateLegacyTurnEndEvent's validation, which every turn/end
// with object data passes through.
func turnEnd(d obj) error {
	bad := corrupt("malformed pre-react-loop turn/end")
	reason, ok := asObj(d.get("reason"))
	if !safeAtLeast1(d.get("turn")) || !onlyKeys(d, "turn", "reason") || !ok {
		return bad
	}
	kind, ok := jsString(reason.get("kind"))
	if !ok {
		return bad
	}
	switch kind {
	case "completed", "blocked", "max-tokens", "interrupted", "disposed":
		if !onlyKeys(reason, "kind") {
			return bad
		}
	case "aborted":
		if !reason.has("reason") && !onlyKeys(reason, "kind") {
			return bad
		}
	case "error":
		if reason.has("error") {
			return nil
		}
		if v, ok := numberOf(reason.get("step")); !ok || !safe(v) || v < 0 {
			return bad
		}
		if failure, ok := asObj(reason.get("failure")); ok && onlyKeys(reason, "kind", "step", "failure") && failureOK(failure) {
			return nil
		}
		if reason.has("code") {
			if !onlyKeys(reason, "kind", "step", "message", "code") {
				return bad
			}
			if _, ok := jsString(reason.get("code")); !ok {
				return bad
			}
		} else if !onlyKeys(reason, "kind", "step", "message") {
			return bad
		}
		if _, ok := jsString(reason.get("message")); !ok {
			return bad
		}
	}
	return nil
}

func failureOK(f obj) bool {
	for _, m := range f {
		switch string(m.Key) {
		case "message", "code", "status", "providerRetryAfterMs", "requestId":
		default:
			return false
		}
	}
	_, okM := jsString(f.get("message"))
	_, okC := jsString(f.get("code"))
	if !okM || !okC {
		return false
	}
	for _, k := range []string{"status", "providerRetryAfterMs"} {
		if v := f.get(k); v != nil {
			if _, isNum := numberOf(v); !isNum {
				return false
			}
		}
	}
	if v := f.get("requestId"); v != nil {
		if _, isStr := jsString(v); !isStr {
			return false
		}
	}
	return true
}
