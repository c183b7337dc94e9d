package simulations

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/projections/dshrecovery"
)

// DSHV0Root is where the v0 model keeps its log inside its memory FS.
const DSHV0Root = "/home/user/.dsh/sessions"

// DSHV0Cwd is the session's project directory in the v0 model.
const DSHV0Cwd = "/home/user/project"

// DSHV0Batch is one durable append of the v0 model: storage lines and the
// number of events they hold.
type DSHV0Batch struct {
	Lines  []byte
	Events int
}

// DSHV0Batches draws the turn shapes of the dsh model (turns, steps, tool
// calls with and without results, failing tools) as session format v0 event
// batches in the shapes the published package declares and writes
// (dsh-session 0.1.0-rc.8 lib/types/types.d.ts; checked by
// TestDSHV0ModelIsPublished against the package itself): identified
// messages with surfaceOp, model-sourced assistant messages, tool results
// citing their tool/call, streamed deltas — packed into text-chunks rows
// when pack is set, as packChunks does. Batches fall where dsh's checkpoint
// policy flushes: before model dispatch, before tool dispatch, after each
// step, after the turn.
func DSHV0Batches(src Source, prof *Profile, pack bool) []DSHV0Batch {
	var (
		out   []DSHV0Batch
		cur   DSHV0Batch
		seq   int64
		clock = int64(recordBaseMs)
	)
	emit := func(format string, args ...any) int64 {
		clock += int64(src.IntN(5))
		s := seq
		line := fmt.Sprintf(format, append([]any{seq, clock}, args...)...)
		cur.Lines = append(append(cur.Lines, line...), '\n')
		cur.Events++
		seq++
		return s
	}
	flush := func() {
		if cur.Events > 0 {
			out = append(out, cur)
			cur = DSHV0Batch{}
		}
	}
	const model = `{"kind":"model","provider":"deepseek","model":"deepseek-chat"}`
	turnsN := 1 + src.IntN(3)
	for t := 1; t <= turnsN; t++ {
		emit(`{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":%d}}`, t)
		emit(`{"type":"user/message","seq":%d,"time":%d,"data":{"id":"u%d","role":"user","content":[{"type":"text","text":"please do the next thing"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, t)
		steps := 1 + src.IntN(3)
		for s := 1; s <= steps; s++ {
			emit(`{"type":"step/start","seq":%d,"time":%d,"data":{"turn":%d,"step":%d}}`, t, s)
			if t == 1 && s == 1 {
				emit(`{"type":"request/header","seq":%d,"time":%d,"data":{"header":{"config":{"provider":"deepseek","model":"deepseek-chat"}},"reason":"initial"}}`)
			}
			flush() // before model dispatch
			if s == steps {
				deltas := src.IntN(6)
				emit(`{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}`, t, s)
				var text strings.Builder
				if pack && deltas >= 3 {
					start, t0 := seq, clock
					var texts, dts []string
					for i := 0; i < deltas; i++ {
						if i > 0 {
							gap := src.IntN(5)
							clock += int64(gap)
							dts = append(dts, strconv.Itoa(gap))
						}
						texts = append(texts, `"tok`+strconv.Itoa(i)+` "`)
						text.WriteString("tok" + strconv.Itoa(i) + " ")
					}
					row := fmt.Sprintf(`{"type":"text-chunks","seq0":%d,"time0":%d,"data":{"turn":%d,"step":%d,"index":0,"dt":[%s],"texts":[%s]}}`,
						start, t0, t, s, strings.Join(dts, ","), strings.Join(texts, ","))
					cur.Lines = append(append(cur.Lines, row...), '\n')
					cur.Events += deltas
					seq += int64(deltas)
				} else {
					for i := 0; i < deltas; i++ {
						emit(`{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"chunk":{"type":"text-delta","index":0,"text":"tok%d "}}}`, t, s, i)
						text.WriteString("tok" + strconv.Itoa(i) + " ")
					}
				}
				emit(`{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"`+text.String()+`"}}}}`, t, s)
				emit(`{"type":"assistant/message","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"message":{"id":"a%d.%d","role":"assistant","content":[{"type":"text","text":"`+text.String()+`"}],"source":`+model+`}},"surfaceOp":"append"}`, t, s, t, s)
				emit(`{"type":"step/end","seq":%d,"time":%d,"data":{"turn":%d,"step":%d}}`, t, s)
				flush() // after the step
				break
			}
			n := 1 + src.IntN(2)
			var blocks, ids []string
			for i := 0; i < n; i++ {
				id := "call_" + strconv.Itoa(t) + "_" + strconv.Itoa(s) + "_" + strconv.Itoa(i)
				ids = append(ids, id)
				blocks = append(blocks, `{"type":"tool-call","id":"`+id+`","name":"bash","arguments":"{\"command\":\"ls\"}"}`)
			}
			emit(`{"type":"assistant/message","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"message":{"id":"a%d.%d","role":"assistant","content":[`+strings.Join(blocks, ",")+`],"source":`+model+`}},"surfaceOp":"append"}`, t, s, t, s)
			flush() // before tool dispatch
			for _, id := range ids {
				call := emit(`{"type":"tool/call","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"callId":"`+id+`","name":"bash","arguments":"{\"command\":\"ls\"}"}}`, t, s)
				result, errPart := "ok", ""
				if src.IntN(100) < prof.ErrPct {
					result, errPart = "tool crashed", `,"error":{"name":"ToolError","code":"TOOL_FAILED"}`
				}
				emit(`{"type":"tool/result","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,"message":{"id":"r.`+id+`","role":"user","content":[{"type":"tool-result","toolCallId":"`+id+`","content":[{"type":"text","text":"`+result+`"}]}],"source":{"kind":"tool","callId":"`+id+`"}}`+errPart+`},"surfaceOp":"append","sourceEventSeqs":[`+strconv.FormatInt(call, 10)+`]}`, t, s)
			}
			emit(`{"type":"step/end","seq":%d,"time":%d,"data":{"turn":%d,"step":%d}}`, t, s)
			flush() // after the step
		}
		emit(`{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":%d,"reason":{"kind":"completed"}}}`, t)
		flush()
	}
	return out
}

// DSHV0Header is the v0 model's header (delegationDepth 0: a top-level
// session).
func DSHV0Header() v0.Header {
	return v0.Header{Version: v0.FormatVersion, ID: dshSession, CreatedAt: recordBaseMs, Cwd: []byte(strconv.Quote(DSHV0Cwd)), DelegationDepth: 0}
}

// RunDSHV0 drives one v0 log (enc, packed or not) on the strict memory FS
// the way the published backend writes it, crashes inside a random append
// (a torn write; a power loss keeps a random prefix of the unsynced bytes),
// and recovers it as the published load() does (dshlog.RecoverV0).
// Invariants: every acknowledged event survives, byte for byte, in order;
// the recovered log is balanced; a second recovery changes nothing.
func RunDSHV0(src Source, prof *Profile, enc v0.Encoding, pack bool) DSHResult {
	res := DSHResult{Ran: true}
	fail := func(format string, args ...any) DSHResult {
		res.Violations = append(res.Violations, "dsh v0: "+fmt.Sprintf(format, args...))
		return res
	}
	mem := memory.NewFS()
	w, err := dshlog.NewV0Writer(mem, DSHV0Root, DSHV0Header(), enc)
	if err != nil {
		return fail("writer: %v", err)
	}
	batches := DSHV0Batches(src, prof, pack)
	crashAt := src.IntN(len(batches) + 1)
	var acked []byte
	for i, b := range batches {
		if i == crashAt {
			mem.Inject(memory.Fault{Op: memory.OpWrite, Torn: src.IntN(256), Crash: true})
		}
		if err := w.Append(b.Lines); err != nil {
			if errors.Is(err, memory.ErrCrashed) {
				break
			}
			return fail("append batch %d: %v", i, err)
		}
		acked = append(acked, b.Lines...)
		res.Appended += b.Events
	}
	mem.ClearFaults()
	if src.IntN(100) < prof.PowerPct {
		mem.CrashKeeping(func(_ string, b []byte) int { return src.IntN(len(b) + 1) })
	} else {
		mem.CrashKeeping(func(_ string, b []byte) int { return len(b) })
	}
	rec, err := dshlog.RecoverV0(mem, w.Path(), v0.Options{})
	if errors.Is(err, events.ErrCorrupt) && res.Appended == 0 {
		return res // the crash hit the first append: no log, or a torn header frame
	}
	if err != nil {
		if res.Appended == 0 && errors.Is(err, adapters.ErrNotFound) {
			return res // the crash hit the first append: nothing was published
		}
		return fail("recover after a crash with %d events acknowledged: %v", res.Appended, err)
	}
	res.Repaired = !rec.Plan.Noop()
	got, err := readV0(mem, w.Path(), enc)
	if err != nil {
		return fail("re-read: %v", err)
	}
	want, _ := readV0Bytes(acked)
	if len(got) < len(want) {
		return fail("recovered %d events, %d were acknowledged", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			return fail("acknowledged event %d changed: %s", i, got[i])
		}
	}
	again, err := dshlog.RecoverV0(mem, w.Path(), v0.Options{})
	if err != nil || !again.Plan.Noop() {
		return fail("second recovery: %v, %+v", err, again.Plan)
	}
	return res
}

// readV0 decodes a v0 log's events as JSON lines and checks it is balanced.
func readV0(mem *memory.FS, path string, enc v0.Encoding) ([]string, error) {
	f, err := mem.OpenFile(path, 0, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	var fold dshrecovery.Fold
	_, err = v0.Scan(f, enc, v0.Options{}, func(r v0.Record) error {
		out = append(out, string(r.AppendJSON(nil)))
		return fold.Apply(r)
	})
	if err != nil {
		return nil, err
	}
	if cl, err := fold.Closers(); err != nil || len(cl) > 0 {
		return nil, fmt.Errorf("recovered log is not balanced: %d closers needed (%v)", len(cl), err)
	}
	return out, nil
}

// readV0Bytes decodes storage lines (rows expanded) as JSON lines.
func readV0Bytes(lines []byte) ([]string, error) {
	var out []string
	var p v0.Parser
	for _, l := range bytes.Split(bytes.TrimSuffix(lines, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		recs, err := p.ParseLine(nil, l)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			out = append(out, string(r.AppendJSON(nil)))
		}
	}
	return out, nil
}
