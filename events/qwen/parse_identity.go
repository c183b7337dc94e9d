package qwen

// Decoders for the records that carry a call's turn identity (Qwen Code
// 0.24.4; docs/qwen-0.24.4-records.md, "What on disk tells a cron turn's
// records apart").

// telemetry decodes a ui_telemetry payload's uiEvent {"event.name",
// prompt_id}; nil when uiEvent is not an object.
func (p *recordParser) telemetry(b []byte, sp span) *Telemetry {
	var t *Telemetry
	p.sub(b, sp, func(s *scanner) {
		var v [1]span
		fields(s, []string{"uiEvent"}, v[:])
		if v[0].kind != jObject {
			return
		}
		t = &Telemetry{}
		s.i = v[0].start
		var e [2]span
		fields(s, []string{"event.name", "prompt_id"}, e[:])
		p.setStr(&t.EventName, p.bytesOf(b, e[0]))
		p.setStr(&t.PromptID, p.bytesOf(b, e[1]))
	})
	return t
}

// snapshotPromptID sets *dst to the promptId of a file_history_snapshot
// payload's last snapshot (appendSerializedFileHistorySnapshotBatch writes
// {snapshots: [...]}; the ACP prompt path records one, the latest).
func (p *recordParser) snapshotPromptID(dst *string, b []byte, sp span) {
	p.sub(b, sp, func(s *scanner) {
		var v [1]span
		fields(s, []string{"snapshots"}, v[:])
		if v[0].kind != jArray {
			return
		}
		s.i = v[0].start
		var last span
		s.array(func() bool {
			if s.peek() != '{' {
				_, ok := s.value()
				return ok
			}
			var e [1]span
			fields(s, []string{"promptId"}, e[:])
			last = e[0]
			return s.err == nil
		})
		p.setStr(dst, p.bytesOf(b, last))
	})
}
