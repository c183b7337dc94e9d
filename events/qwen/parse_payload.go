package qwen

import (
	"math"
	"strconv"
)

func (p *recordParser) backgroundTurn(b []byte, sp span) *BackgroundTurn {
	t := &BackgroundTurn{}
	p.sub(b, sp, func(s *scanner) {
		var v [7]span
		fields(s, []string{"turnId", "taskId", "kind", "toolUseId", "sourceTurnId", "label", "startedAt"}, v[:])
		for i, dst := range []*string{&t.TurnID, &t.TaskID, &t.Kind, &t.ToolUseID, &t.SourceTurnID, &t.Label} {
			p.setStr(dst, p.bytesOf(b, v[i]))
		}
		if v[6].kind != jAbsent {
			p.setStr(&t.StartedAt, b[v[6].start:v[6].end])
		}
	})
	return t
}

func (p *recordParser) goalContext(b []byte, sp span) *GoalContext {
	g := &GoalContext{}
	p.sub(b, sp, func(s *scanner) {
		var v [3]span
		fields(s, []string{"goalId", "revision", "turnId"}, v[:])
		p.setStr(&g.GoalID, p.bytesOf(b, v[0]))
		g.HasGoalID = v[0].kind == jString
		p.setStr(&g.TurnID, p.bytesOf(b, v[2]))
		g.HasTurnID = v[2].kind == jString
		g.Revision, g.RevisionIsInteger, g.RevisionComparable = revisionText(b, v[1])
	})
	return g
}

// revisionText renders a revision so that equal text means JavaScript ===:
// numbers canonically (1, 1.0 and 1e0 are one value; -0 is 0), strings
// quoted (so "1" differs from 1), literals as written.
func revisionText(b []byte, sp span) (text string, integer, comparable bool) {
	switch sp.kind {
	case jNumber:
		f, _ := strconv.ParseFloat(string(b[sp.start:sp.end]), 64)
		if f == 0 {
			f = 0
		}
		integer = !math.IsInf(f, 0) && f == math.Trunc(f)
		return strconv.FormatFloat(f, 'g', -1, 64), integer, true
	case jString:
		return strconv.Quote(spanString(b, sp)), false, true
	case jNull, jTrue, jFalse:
		return string(b[sp.start:sp.end]), false, true
	}
	return "", false, false
}

// payload decodes the typed systemPayload of r's subtype. Its strings are
// flushed with the record's, except where they land in slices still growing.
// subtype is the record's, whose string is not materialized yet.
func (p *recordParser) payload(r *Record, subtype []byte, b []byte, sp span) {
	str := func(dst *string, v span) { p.setStr(dst, p.bytesOf(b, v)) }
	switch string(subtype) {
	case SubtypeChatCompression:
		c := &Compression{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"compressedHistory", "completedToolCallIds"}, v[:])
			c.HasHistory = truthySpan(b, v[0])
			p.eager = true
			defer func() { p.eager = false }()
			if v[0].kind == jArray {
				s.i = v[0].start
				s.array(func() bool {
					if s.peek() == '{' {
						role, kind, ok := p.content(false)
						if ok {
							ct := Content{}
							p.setStr(&ct.Role, p.bytesOf(b, role))
							if kind == jArray {
								ct.Parts = make([]Part, len(p.parts))
								p.setParts(b, ct.Parts)
							}
							c.History = append(c.History, ct)
						}
						p.parts = p.parts[:0]
						return ok
					}
					_, ok := s.value()
					return ok
				})
			}
			if v[1].kind == jArray {
				s.i = v[1].start
				s.array(func() bool {
					e, ok := s.value()
					if e.kind == jString {
						c.CompletedToolCallIDs = append(c.CompletedToolCallIDs, string(p.bytesOf(b, e)))
					}
					return ok
				})
			}
		})
		r.Compression = c
	case SubtypeSlashCommand:
		sc := &SlashCommand{}
		p.sub(b, sp, func(s *scanner) {
			var v [5]span
			fields(s, []string{"phase", "rawCommand", "sentToModel", "hiddenInvocation", "outputHistoryItems"}, v[:])
			str(&sc.Phase, v[0])
			str(&sc.RawCommand, v[1])
			sc.SentToModel = v[2].kind == jTrue
			sc.HiddenInvocation = v[3].kind == jTrue
			if v[4].kind == jArray {
				sc.HasOutputItems = true
				sc.OutputItemTypes = []string{}
				s.i = v[4].start
				s.array(func() bool {
					if s.peek() == '{' {
						var tv [1]span
						fields(s, []string{"type"}, tv[:])
						sc.OutputItemTypes = append(sc.OutputItemTypes, string(p.bytesOf(b, tv[0])))
						return s.err == nil
					}
					_, ok := s.value()
					sc.OutputItemTypes = append(sc.OutputItemTypes, "")
					return ok
				})
				sc.OutputItemsLength = len(sc.OutputItemTypes)
			}
		})
		r.SlashCommand = sc
	case SubtypeGoalTurnEnd:
		p.sub(b, sp, func(s *scanner) {
			var v [1]span
			fields(s, []string{"toolCallId"}, v[:])
			r.GoalTurnEnd = &GoalTurnEnd{}
			str(&r.GoalTurnEnd.ToolCallID, v[0])
		})
	case SubtypeTurnResult:
		t := &TurnResult{}
		p.sub(b, sp, func(s *scanner) {
			var v [7]span
			fields(s, []string{"promptId", "state", "stopReason", "cancelledAt", "endedAt", "startedAt", "error"}, v[:])
			str(&t.PromptID, v[0])
			str(&t.State, v[1])
			str(&t.StopReason, v[2])
			if truthySpan(b, v[3]) {
				t.HasCancelledAt = true
				p.setStr(&t.CancelledAt, b[v[3].start:v[3].end])
			}
			if v[4].kind != jAbsent {
				p.setStr(&t.EndedAt, b[v[4].start:v[4].end])
			}
			if v[5].kind != jAbsent {
				p.setStr(&t.StartedAt, b[v[5].start:v[5].end])
			}
			if v[6].kind == jObject {
				t.HasError = true
				s.i = v[6].start
				var e [2]span
				fields(s, []string{"message", "code"}, e[:])
				str(&t.ErrorMessage, e[0])
				str(&t.ErrorCode, e[1])
			}
		})
		r.TurnResult = t
	case SubtypeCustomTitle:
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"customTitle", "titleSource"}, v[:])
			r.CustomTitle = &CustomTitle{}
			str(&r.CustomTitle.Title, v[0])
			str(&r.CustomTitle.Source, v[1])
		})
	case SubtypeNotification, SubtypeCron, SubtypeBackgroundTaskCompleted:
		n := &Notification{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"displayText", "backgroundTask"}, v[:])
			str(&n.DisplayText, v[0])
			if v[1].kind == jObject {
				s.i = v[1].start
				var t [5]span
				fields(s, []string{"taskId", "status", "kind", "sourceTurnId", "toolUseId"}, t[:])
				str(&n.TaskID, t[0])
				str(&n.TaskStatus, t[1])
				str(&n.TaskKind, t[2])
				str(&n.SourceTurnID, t[3])
				str(&n.ToolUseID, t[4])
			}
		})
		r.Notification = n
	case SubtypeUITelemetry:
		r.Telemetry = p.telemetry(b, sp)
	case SubtypeFileHistorySnapshot:
		p.snapshotPromptID(&r.SnapshotPromptID, b, sp)
	case SubtypeBranchCheckpoint:
		c := &BranchCheckpoint{}
		p.sub(b, sp, func(s *scanner) {
			var v [2]span
			fields(s, []string{"startExclusiveRecordUuid", "assistantRecordUuid"}, v[:])
			str(&c.StartExclusiveRecordUUID, v[0])
			str(&c.AssistantRecordUUID, v[1])
		})
		r.BranchCheckpoint = c
	}
}
