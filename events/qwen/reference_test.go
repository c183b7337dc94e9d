package qwen

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is the reference implementation the fast scanner is checked
// against (FuzzDecodeDifferential): the same semantics written the obvious
// way, on encoding/json, with none of the scanner's code. It is slow and
// allocates freely; it only has to be right.

type refResult struct {
	recs     []*parsed
	complete bool
	// unsupported: the input nests deeper than encoding/json's limit of
	// 10000, which JSON.parse (and the scanner) accept; no comparison.
	unsupported bool
}

func refDecodeLine(line []byte, opts DecodeOptions) refResult {
	res := refResult{complete: true}
	off := 0
	for _, piece := range bytes.Split(line, []byte("\r")) {
		base := off
		off += len(piece) + 1
		trimmed := bytes.TrimLeftFunc(piece, refIsSpace)
		base += len(piece) - len(trimmed)
		trimmed = bytes.TrimRightFunc(trimmed, refIsSpace)
		if len(trimmed) == 0 {
			continue
		}
		if refTooDeep(trimmed) {
			res.unsupported = true
			return res
		}
		if json.Valid(trimmed) {
			if trimmed[0] == '{' {
				res.recs = append(res.recs, refRecord(trimmed, base, opts))
			} else {
				res.complete = false
			}
			continue
		}
		recs, complete := refRecover(trimmed, base, opts)
		res.recs = append(res.recs, recs...)
		res.complete = res.complete && complete
	}
	return res
}

func refIsSpace(r rune) bool {
	return strings.ContainsRune(" \t\n\v\f\r\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff", r) ||
		r >= 0x2000 && r <= 0x200a
}

func refTooDeep(b []byte) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			if depth > 9000 {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// refRecover is recoverObjectsFromLine, character by character.
func refRecover(b []byte, base int, opts DecodeOptions) ([]*parsed, bool) {
	var out []*parsed
	depth, inStr, esc, start, complete := 0, false, false, -1, true
	s := string(b)
	for i, r := range s {
		if esc {
			esc = false
			continue
		}
		if inStr {
			if r == '\\' {
				esc = true
			} else if r == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case r == '"':
			if depth == 0 {
				complete = false
			}
			inStr = true
		case r == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case r == '}':
			depth--
			if depth == 0 && start >= 0 {
				frag := b[start : i+1]
				if json.Valid(frag) {
					out = append(out, refRecord(frag, base+start, opts))
				} else {
					complete = false
				}
				start = -1
			} else if depth < 0 {
				complete, depth, start = false, 0, -1
			}
		case depth == 0 && !refIsSpace(r):
			complete = false
		}
	}
	return out, complete && len(out) > 0 && depth == 0 && !inStr && start == -1
}

func refKind(m json.RawMessage) jkind {
	if m == nil {
		return jAbsent
	}
	switch m[0] {
	case '"':
		return jString
	case '{':
		return jObject
	case '[':
		return jArray
	case 't':
		return jTrue
	case 'f':
		return jFalse
	case 'n':
		return jNull
	}
	return jNumber
}

func refStr(m json.RawMessage) string {
	if refKind(m) != jString {
		return ""
	}
	var s string
	if err := json.Unmarshal(m, &s); err != nil {
		panic(err)
	}
	return s
}

func refTruthy(m json.RawMessage) bool {
	switch refKind(m) {
	case jAbsent, jNull, jFalse:
		return false
	case jString:
		return refStr(m) != ""
	case jNumber:
		f, _ := strconv.ParseFloat(string(m), 64)
		return f != 0
	}
	return true
}

func refObject(m json.RawMessage) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(m, &o); err != nil {
		panic(err)
	}
	return o
}

func refArray(m json.RawMessage) []json.RawMessage {
	var a []json.RawMessage
	if err := json.Unmarshal(m, &a); err != nil {
		panic(err)
	}
	return a
}

func refRecord(b []byte, start int, opts DecodeOptions) *parsed {
	o := refObject(b)
	r := &Record{
		UUID: refStr(o["uuid"]), ParentUUID: refStr(o["parentUuid"]), ParentNull: refKind(o["parentUuid"]) == jNull, SessionID: refStr(o["sessionId"]),
		Type: refStr(o["type"]), Subtype: refStr(o["subtype"]), HasSubtype: refKind(o["subtype"]) == jString,
		Cwd: refStr(o["cwd"]), Provenance: refStr(o["provenance"]), PromptID: refStr(o["promptId"]),
		DeliveredTurn: refKind(o["deliveredTurn"]) == jTrue,
		Version:       refStr(o["version"]), HasUsage: refKind(o["usageMetadata"]) == jObject,
	}
	if bt := o["backgroundTurn"]; refKind(bt) == jObject {
		t := refObject(bt)
		r.HasBackground = true
		r.BackgroundTurn = &BackgroundTurn{TurnID: refStr(t["turnId"]), TaskID: refStr(t["taskId"]), Kind: refStr(t["kind"]),
			ToolUseID: refStr(t["toolUseId"]), SourceTurnID: refStr(t["sourceTurnId"]), Label: refStr(t["label"])}
		if t["startedAt"] != nil {
			r.BackgroundTurn.StartedAt = string(t["startedAt"])
		}
	}
	if tr := o["toolCallResult"]; refKind(tr) == jObject {
		t := refObject(tr)
		r.ToolStatus, r.ToolExecStatus = refStr(t["status"]), refStr(t["executionStatus"])
	}
	if d := refStr(o["daemonPromptId"]); strings.TrimFunc(d, refIsSpace) != "" {
		r.DaemonPromptID = d
	}
	if refKind(o["timestamp"]) == jString {
		r.Timestamp = refStr(o["timestamp"])
		r.TimeMs, r.TimeOK = refParseTime(r.Timestamp)
	}
	pr := &parsed{rec: r, start: start, end: start + len(b),
		uuid: refKind(o["uuid"]), parent: refKind(o["parentUuid"]), session: refKind(o["sessionId"]),
		typ: refKind(o["type"]), timestamp: refKind(o["timestamp"]), subtype: refKind(o["subtype"]),
		message: refKind(o["message"])}
	if pr.message == jObject {
		r.Message, pr.parts = refContent(o["message"], opts)
	}
	if g := o["goalContext"]; refKind(g) == jObject {
		go_ := refObject(g)
		gc := &GoalContext{GoalID: refStr(go_["goalId"]), TurnID: refStr(go_["turnId"]),
			HasGoalID: refKind(go_["goalId"]) == jString, HasTurnID: refKind(go_["turnId"]) == jString}
		rev := go_["revision"]
		switch refKind(rev) {
		case jNumber:
			f, _ := strconv.ParseFloat(string(rev), 64)
			gc.Revision = strconv.FormatFloat(f+0, 'g', -1, 64) // +0 turns -0 into 0
			if f == 0 {
				gc.Revision = "0"
			}
			gc.RevisionIsInteger = !math.IsInf(f, 0) && math.Trunc(f) == f
			gc.RevisionComparable = true
		case jString:
			gc.Revision, gc.RevisionComparable = strconv.Quote(refStr(rev)), true
		case jNull, jTrue, jFalse:
			gc.Revision, gc.RevisionComparable = string(rev), true
		}
		r.GoalContext = gc
	}
	if pl := o["systemPayload"]; refKind(pl) == jObject && r.HasSubtype {
		refPayload(r, refObject(pl), opts)
	}
	return pr
}

func refContent(m json.RawMessage, opts DecodeOptions) (*Content, jkind) {
	o := refObject(m)
	c := &Content{Role: refStr(o["role"])}
	k := refKind(o["parts"])
	if k == jArray {
		c.Parts = []Part{}
		for _, pm := range refArray(o["parts"]) {
			c.Parts = append(c.Parts, refPart(pm, opts))
		}
	}
	return c, k
}

func refPart(m json.RawMessage, opts DecodeOptions) Part {
	var p Part
	if opts.KeepPayloads {
		p.Raw = append([]byte(nil), m...)
	}
	if refKind(m) != jObject {
		return p
	}
	o := refObject(m)
	_, hasText := o["text"]
	p.OnlyText = hasText && len(o) == 1
	if refKind(o["text"]) == jString {
		p.Text, p.HasText = refStr(o["text"]), true
	}
	p.Thought = refTruthy(o["thought"])
	idName := func(m json.RawMessage) {
		if refKind(m) != jObject {
			return
		}
		f := refObject(m)
		if refKind(f["id"]) == jString {
			p.ID, p.HasID = refStr(f["id"]), true
		}
		if refKind(f["name"]) == jString {
			p.Name, p.HasName = refStr(f["name"]), true
		}
	}
	switch {
	case refTruthy(o["functionCall"]):
		p.Kind = PartFunctionCall
		idName(o["functionCall"])
	case refTruthy(o["functionResponse"]):
		p.Kind = PartFunctionResponse
		idName(o["functionResponse"])
	case refTruthy(o["inlineData"]):
		p.Kind = PartInlineData
	case refTruthy(o["fileData"]):
		p.Kind = PartFileData
	case p.HasText:
		p.Kind = PartText
	}
	return p
}

func refPayload(r *Record, o map[string]json.RawMessage, opts DecodeOptions) {
	switch r.Subtype {
	case SubtypeChatCompression:
		c := &Compression{HasHistory: refTruthy(o["compressedHistory"])}
		if refKind(o["compressedHistory"]) == jArray {
			for _, it := range refArray(o["compressedHistory"]) {
				if refKind(it) == jObject {
					ct, _ := refContent(it, opts)
					c.History = append(c.History, *ct)
				}
			}
		}
		if refKind(o["completedToolCallIds"]) == jArray {
			for _, id := range refArray(o["completedToolCallIds"]) {
				if refKind(id) == jString {
					c.CompletedToolCallIDs = append(c.CompletedToolCallIDs, refStr(id))
				}
			}
		}
		r.Compression = c
	case SubtypeSlashCommand:
		s := &SlashCommand{Phase: refStr(o["phase"]), RawCommand: refStr(o["rawCommand"]),
			SentToModel: refKind(o["sentToModel"]) == jTrue, HiddenInvocation: refKind(o["hiddenInvocation"]) == jTrue}
		if refKind(o["outputHistoryItems"]) == jArray {
			s.HasOutputItems = true
			s.OutputItemTypes = []string{}
			for _, it := range refArray(o["outputHistoryItems"]) {
				t := ""
				if refKind(it) == jObject {
					t = refStr(refObject(it)["type"])
				}
				s.OutputItemTypes = append(s.OutputItemTypes, t)
			}
			s.OutputItemsLength = len(s.OutputItemTypes)
		}
		r.SlashCommand = s
	case SubtypeGoalTurnEnd:
		r.GoalTurnEnd = &GoalTurnEnd{ToolCallID: refStr(o["toolCallId"])}
	case SubtypeTurnResult:
		t := &TurnResult{PromptID: refStr(o["promptId"]), State: refStr(o["state"]), StopReason: refStr(o["stopReason"])}
		if refTruthy(o["cancelledAt"]) {
			t.HasCancelledAt, t.CancelledAt = true, string(o["cancelledAt"])
		}
		if o["endedAt"] != nil {
			t.EndedAt = string(o["endedAt"])
		}
		if o["startedAt"] != nil {
			t.StartedAt = string(o["startedAt"])
		}
		if e := o["error"]; refKind(e) == jObject {
			eo := refObject(e)
			t.HasError, t.ErrorMessage, t.ErrorCode = true, refStr(eo["message"]), refStr(eo["code"])
		}
		r.TurnResult = t
	case SubtypeCustomTitle:
		r.CustomTitle = &CustomTitle{Title: refStr(o["customTitle"]), Source: refStr(o["titleSource"])}
	case SubtypeNotification, SubtypeCron, SubtypeBackgroundTaskCompleted:
		n := &Notification{DisplayText: refStr(o["displayText"])}
		if bt := o["backgroundTask"]; refKind(bt) == jObject {
			t := refObject(bt)
			n.TaskID, n.TaskStatus, n.TaskKind = refStr(t["taskId"]), refStr(t["status"]), refStr(t["kind"])
			n.SourceTurnID, n.ToolUseID = refStr(t["sourceTurnId"]), refStr(t["toolUseId"])
		}
		r.Notification = n
	case SubtypeUITelemetry:
		if ev := o["uiEvent"]; refKind(ev) == jObject {
			eo := refObject(ev)
			r.Telemetry = &Telemetry{EventName: refStr(eo["event.name"]), PromptID: refStr(eo["prompt_id"])}
		}
	case SubtypeFileHistorySnapshot:
		if refKind(o["snapshots"]) == jArray {
			for _, it := range refArray(o["snapshots"]) {
				if refKind(it) == jObject {
					r.SnapshotPromptID = refStr(refObject(it)["promptId"])
				}
			}
		}
	case SubtypeBranchCheckpoint:
		r.BranchCheckpoint = &BranchCheckpoint{StartExclusiveRecordUUID: refStr(o["startExclusiveRecordUuid"]),
			AssistantRecordUUID: refStr(o["assistantRecordUuid"])}
	}
}

// refParseTime reads the ECMAScript date-time format with a regular
// structure check and the standard library's calendar arithmetic. An
// invalid timestamp reads as 0. V8's legacy fallback forms are left to
// parseLegacy: both implementations would only call time.Parse for them.
func refParseTime(s string) (int64, bool) {
	if !utf8.ValidString(s) {
		return 0, false
	}
	if t, ok := refISO(s); ok {
		return t, true
	}
	return parseLegacy(s)
}

var isoRe = regexp.MustCompile(`^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$`)

func refISO(s string) (int64, bool) {
	m := isoRe.FindStringSubmatch(s)
	if m == nil || m[1] == "-000000" {
		return 0, false
	}
	atoi := func(x string, def int) int {
		if x == "" {
			return def
		}
		n, _ := strconv.Atoi(x)
		return n
	}
	year := atoi(strings.TrimPrefix(m[1], "+"), 0)
	mon, day := atoi(m[2], 1), atoi(m[3], 1)
	h, mi, sec := atoi(m[4], 0), atoi(m[5], 0), atoi(m[6], 0)
	ms := 0
	if m[7] != "" {
		f := (m[7] + "00")[:3]
		ms = atoi(f, 0)
	}
	if mon < 1 || mon > 12 || day < 1 || day > 31 || mi > 59 || sec > 59 || h > 24 || h == 24 && (mi|sec|ms) != 0 {
		return 0, false
	}
	off := 0
	if z := m[8]; len(z) > 1 {
		digits := strings.ReplaceAll(z[1:], ":", "")
		oh, om := atoi(digits[:2], 0), atoi(digits[2:], 0)
		if oh > 23 || om > 59 {
			return 0, false
		}
		off = oh*60 + om
		if z[0] == '-' {
			off = -off
		}
	}
	t := time.Date(year, time.Month(mon), day, h, mi, sec, ms*1e6, time.UTC).UnixMilli() - int64(off)*60000
	return t, t >= -8.64e15 && t <= 8.64e15
}
