package harness

import (
	"math/rand/v2"
	"strconv"

	"github.com/tailproof/tailproof/events/turn"
)

// codexWriter models Codex CLI's rollout recorder (codex-rs/rollout
// recorder.rs @b505ee80, policy.rs @851c9d5e in Limited mode plus the
// Extended exec_command_end): one line per persisted item, written with
// write_all + flush and never fsynced, in the order the session produces
// them. Explicit versions open each turn with task_started and end it with
// task_complete or turn_aborted (with the hidden <turn_aborted> marker of
// PR #9043 before it); legacy versions (policy @001cb8e2) write neither
// start nor completion, only turn_aborted. Paginated threads number every
// line with ordinal.
type codexWriter struct {
	r       *rand.Rand
	p       profile
	s       *session
	clock   int64 // model milliseconds
	ordinal int
	calls   int
}

func (w *codexWriter) ts() string {
	w.clock += int64(1 + w.r.IntN(900))
	return isoMillis(w.clock)
}

// rec writes one rollout line: {timestamp, [ordinal], type, payload}.
func (w *codexWriter) rec(typ, payload string) []byte {
	b := make([]byte, 0, 96+len(payload))
	b = append(b, `{"timestamp":"`...)
	b = append(b, w.ts()...)
	b = append(b, '"')
	if w.p.ordinals {
		b = append(b, `,"ordinal":`...)
		b = strconv.AppendInt(b, int64(w.ordinal), 10)
		w.ordinal++
	}
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","payload":`...)
	b = append(b, payload...)
	return append(b, '}')
}

func (w *codexWriter) add(a action) { w.s.acts = append(w.s.acts, a) }

func (w *codexWriter) meta(id string) {
	w.add(action{turn: -1, line: w.rec("session_meta", `{"id":"`+id+`","timestamp":"`+isoMillis(w.clock)+
		`","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.169.0","source":"cli"}`)})
}

// turn writes model turn k (an index into s.turns, already appended).
func (w *codexWriter) turn(k int) {
	p, r := w.p, w.r
	id := "t" + itoa(k)
	tt := &w.s.turns[k]
	tt.first = len(w.s.acts)
	if p.legacy {
		w.add(action{turn: k, line: w.rec("turn_context", `{"cwd":"/w","model":"gpt-5"}`)})
	} else {
		w.add(action{turn: k, line: w.rec("turn_context", `{"turn_id":"`+id+`","cwd":"/w","model":"gpt-5"}`)})
		w.add(action{turn: k, line: w.rec("event_msg", `{"type":"task_started","turn_id":"`+id+`"}`)})
	}
	if p.chance(r, p.inject) {
		w.add(action{turn: k, source: turn.SourceInjected, prompt: "<environment_context><cwd>/w</cwd></environment_context>",
			line: w.rec("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context><cwd>/w</cwd></environment_context>"}]}`)})
	}
	text := promptText(k, 0, r)
	w.add(action{turn: k, line: w.rec("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":`+quote(text)+`}]}`)})
	w.add(action{turn: k, source: turn.SourceUser, prompt: text,
		line: w.rec("event_msg", `{"type":"user_message","message":`+quote(text)+`,"kind":"plain"}`)})
	steps := 1
	if p.chance(r, p.tools) {
		steps += 1 + r.IntN(3)
	}
	for s := 0; s < steps; s++ {
		if r.IntN(2) == 0 {
			w.add(action{turn: k, line: w.rec("response_item", `{"type":"reasoning","summary":[],"encrypted_content":"gAAA`+itoa(r.IntN(1e6))+`"}`)})
		}
		if p.chance(r, p.interrupt/float64(steps)) {
			w.abort(k, id)
			return
		}
		if s == steps-1 {
			break
		}
		if r.IntN(3) == 0 {
			w.add(action{turn: k, line: w.rec("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}]`+w.phase("commentary")+`}`)})
		}
		w.calls++
		c := "c" + itoa(k) + "." + itoa(w.calls)
		w.add(action{turn: k, line: w.rec("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\",\"日本\"]}","call_id":"`+c+`"}`)})
		if r.IntN(3) == 0 {
			w.add(action{turn: k, line: w.rec("event_msg", `{"type":"exec_command_end","call_id":"`+c+`","exit_code":0,"aggregated_output":"ok"}`)})
		}
		if p.chance(r, p.interrupt/float64(steps)) {
			w.abort(k, id)
			return
		}
		w.add(action{turn: k, line: w.rec("response_item", `{"type":"function_call_output","call_id":"`+c+`","output":"a.go\nb.go 日本語"}`)})
		if p.chance(r, p.steer) {
			// A person types while the turn runs: Codex steers it into
			// the open turn (a user_message inside task_started … end).
			st := promptText(k, s+1, r)
			w.add(action{turn: k, source: turn.SourceUser, prompt: st, line: w.rec("event_msg", `{"type":"user_message","message":`+quote(st)+`,"kind":"plain"}`)})
		}
		if p.chance(r, p.compact) {
			w.add(action{turn: k, line: w.rec("compacted", `{"message":"Summary so far.","replacement_history":[]}`)})
			w.add(action{turn: k, line: w.rec("event_msg", `{"type":"context_compacted"}`)})
		}
	}
	final := "Renamed 2 files."
	w.add(action{turn: k, line: w.rec("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"`+final+`"}]`+w.phase("final_answer")+`}`)})
	w.add(action{turn: k, line: w.rec("event_msg", `{"type":"agent_message","message":"`+final+`"`+w.phase("final_answer")+`}`)})
	if r.IntN(2) == 0 {
		w.add(action{turn: k, line: w.rec("event_msg", `{"type":"token_count","info":null,"rate_limits":null}`)})
	}
	if p.legacy {
		// Legacy writers persist no completion: the turn is done when the
		// agent message is; nothing in the file says so.
		w.s.acts[len(w.s.acts)-1].finish = true
		tt.finishAt, tt.lastLine = len(w.s.acts)-1, len(w.s.acts)-1
		return
	}
	end := action{turn: k, finish: true, line: w.rec("event_msg", `{"type":"task_complete","turn_id":"`+id+`","last_agent_message":"`+final+`"}`)}
	tt.lastLine = len(w.s.acts) - 1
	if p.chance(r, p.lostEnd) {
		end.line = nil // the completion never reached the file
	} else {
		tt.lastLine = len(w.s.acts)
	}
	tt.finishAt = len(w.s.acts)
	w.add(end)
}

// abort writes the person's interrupt: the model-visible marker, then
// turn_aborted{reason:interrupted} (turn_id null on versions before it
// carried one).
func (w *codexWriter) abort(k int, id string) {
	tt := &w.s.turns[k]
	w.add(action{turn: k, line: w.rec("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"}]}`)})
	tid := `"` + id + `"`
	if w.p.legacy || w.r.IntN(4) == 0 {
		tid = "null"
	}
	tt.abortAt = len(w.s.acts)
	tt.lastLine = len(w.s.acts)
	w.add(action{turn: k, abort: true, line: w.rec("event_msg", `{"type":"turn_aborted","turn_id":`+tid+`,"reason":"interrupted"}`)})
}

func (w *codexWriter) phase(p string) string {
	if w.p.legacy {
		return ""
	}
	return `,"phase":"` + p + `"`
}
