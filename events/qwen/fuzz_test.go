package qwen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tailproof/tailproof/events"
)

var fuzzSeeds = []string{
	`{"uuid":"r1","parentUuid":"y2","sessionId":"S","timestamp":"2026-01-01T00:00:02.000Z","type":"tool_result","provenance":"tool_result","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"error":"Tool \"run_shell_command\" was canceled by the user."}}}]},"toolCallResult":{"callId":"c1","status":"cancelled","executionStatus":"not_started","status":"c\u0061ncelled"}}`,
	`{"uuid":"r2","parentUuid":"y3","sessionId":"S","timestamp":"2026-01-01T00:00:03.000Z","type":"tool_result","cwd":"/w","toolCallResult":{"callId":"c2","status":7,"executionStatus":"success","resultDisplay":{"status":"x"}}}`,
	`{"uuid":"y1","parentUuid":"f1","sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"system","subtype":"ui_telemetry","provenance":"system","cwd":"/w","version":"0.24.4","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","event.timestamp":"2026-01-01T00:00:01.000Z","prompt_id":"S########cron1767225650000"}}}`,
	`{"uuid":"f1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"system","subtype":"file_history_snapshot","provenance":"system","cwd":"/w","version":"0.24.4","systemPayload":{"snapshots":[{"promptId":"S########1","trackedFileBackups":{}},7,{"promptId":"S########\u0032"}]}}`,
	`{"uuid":"a1","parentUuid":"y1","sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"assistant","provenance":"assistant_output","cwd":"/w","version":"0.24.4","model":"m","message":{"role":"model","parts":[{"text":"done"}]},"usageMetadata":{"promptTokenCount":3}}`,
	`{"uuid":"10000000-0000-4000-8000-000000000001","parentUuid":null,"sessionId":"00000000-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","type":"user","provenance":"real_user","cwd":"/workspace","version":"0.21.11","message":{"role":"user","parts":[{"text":"serve A/B fixture turn"}]}}`,
	`{"uuid":"tool-start","parentUuid":"assistant-1","sessionId":"session-test","timestamp":"2026-08-16T00:00:02.000Z","type":"assistant","cwd":"/workspace/project","version":"test","message":{"role":"model","parts":[{"functionCall":{"id":"read-1","name":"read_file","args":{"path":"/workspace/project/src/index.ts"}}}]}}`,
	`{"uuid":"tool-result","parentUuid":"tool-start","sessionId":"session-test","timestamp":"2026-08-16T00:00:03.000Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"read-1","name":"read_file","response":{"output":"hidden\n\"raw\" output \u00e9\ud83d\ude00"}}}]}}`,
	`{"uuid":"c1","parentUuid":"a1","sessionId":"S","timestamp":"2026-01-01T00:00:05.000Z","type":"system","subtype":"chat_compression","systemPayload":{"info":{},"compressedHistory":[{"role":"user","parts":[{"text":"summary"}]}],"completedToolCallIds":["x",1]}}`,
	`{"uuid":"s1","parentUuid":"u1","sessionId":"S","type":"system","subtype":"slash_command","systemPayload":{"phase":"result","rawCommand":"/help","outputHistoryItems":[{"type":"assistant","text":"Done."},3]}}`,
	`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user"}{"uuid":"b","parentUuid":"a","sessionId":"S","type":"assistant"}`,
	`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user"} junk {"uuid":"b"`,
	`{"uuid":"a","parentUuid":null,"sessionId":"S","type":"user","goalContext":{"goalId":"g","revision":1.0,"turnId":"t"},"subtype":"turn_result","systemPayload":{"promptId":"p","state":"cancelled","cancelledAt":"2026"}}`,
	"\ufeff {\"uuid\":\"a\",\"parentUuid\":\"\",\"sessionId\":\"S\",\"type\":\"user\"}\r\n",
	`[1,2,3]`, `"str"`, `null`, `{"a":1}}{"b":{"c":[}]}}`, `{"\u0075uid":"x","uuid":"y","uuid":"z"}`,
	`{"uuid":"n1","parentUuid":"a1","sessionId":"S","type":"user","subtype":"notification","systemPayload":{"displayText":"d","backgroundTask":{"taskId":"t","status":"completed","kind":"agent"}}}`,
	// Qwen Code 0.24.4's background notification turn: the stamp first (its
	// key order), a stamped tool result, the unstamped task-completed record.
	`{"backgroundTurn":{"turnId":"S########notification1b9d","taskId":"agent-1","kind":"agent","toolUseId":"call-7","sourceTurnId":"p1","label":"explore","startedAt":1767225609100},"uuid":"a2","parentUuid":"n1","sessionId":"S","timestamp":"2026-01-01T00:00:10.000Z","type":"assistant","provenance":"assistant_output","cwd":"/w","version":"0.24.4","model":"m","message":{"role":"model","parts":[{"text":"done"}]}}`,
	`{"backgroundTurn":{"turnId":7,"taskId":null,"startedAt":"x"},"uuid":"r2","parentUuid":"a2","sessionId":"S","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c","name":"n","response":{}}}]}}`,
	`{"backgroundTurn":true,"uuid":"r3","parentUuid":"r2","sessionId":"S","type":"assistant","backgroundTurn":{"turnId":"t"}}`,
	`{"uuid":"d1","parentUuid":"a1","sessionId":"S","type":"system","provenance":"system","subtype":"background_task_completed","systemPayload":{"displayText":"d","backgroundTask":{"taskId":"t","sourceTurnId":"p1","status":"failed","kind":"shell","toolUseId":"c1"}}}`,
	`{"uuid":"x1","parentUuid":"a1","sessionId":"S","type":"system","subtype":"turn_result","systemPayload":{"promptId":"p","state":"error","error":{"message":"boom","code":429},"startedAt":1.5e12,"endedAt":1767225609100,"promptText":"hi"}}`,
	`{"uuid":"b1","parentUuid":"a1","sessionId":"S","type":"system","subtype":"branch_checkpoint","systemPayload":{"v":1,"startExclusiveRecordUuid":"u1","assistantRecordUuid":"a1"}}`,
	"{\"uuid\":\"\xff\xfe\",\"x\":\"\\ud800\\u0041\"}",
	`{"timestamp":"+275760-09-13T00:00:00.000Z"}`, `{"timestamp":"2026-02-30T24:00"}`,
	`{"timestamp":"+277000"}`, `{"timestamp":"2026-01-01 00:01:00Z"}`, `{"timestamp":"Thu, 01 Jan 2026 00:01:00 GMT"}`,
}

// FuzzDecodeLine: no input panics the codec, and every event it yields is a
// valid record positioned inside the line.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		line := events.Line{Bytes: b, Pos: events.Position{Line: 3, Offset: 100}, Terminated: true, Size: int64(len(b))}
		evs, _ := Codec{Opts: DecodeOptions{KeepPayloads: true}}.DecodeLine(nil, line)
		for _, ev := range evs {
			r := ev.Body.(*Record)
			if r.UUID == "" || r.SessionID == "" || !isRecordType([]byte(r.Type)) {
				t.Fatalf("invalid record emitted: %+v", r)
			}
			if ev.Pos.Offset < 100 || ev.Pos.Offset >= 100+int64(len(b)) || b[ev.Pos.Offset-100] != '{' {
				t.Fatalf("bad position %v", ev.Pos)
			}
			_ = ev.Describe()
		}
		p := recordParser{light: true}
		var res lineResult
		p.decodeLine(b, &res)
		if len(res.recs) != countObjects(b) {
			t.Fatalf("light decode found %d objects, full %d", len(res.recs), countObjects(b))
		}
	})
}

func countObjects(b []byte) int {
	p := recordParser{}
	var res lineResult
	p.decodeLine(b, &res)
	return len(res.recs)
}

// FuzzDecodeDifferential: the scanner and the encoding/json reference agree
// on every input — which objects a line yields, where, whether the line is
// complete, and every decoded field.
func FuzzDecodeDifferential(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, keep bool) {
		opts := DecodeOptions{KeepPayloads: keep}
		want := refDecodeLine(b, opts)
		if want.unsupported {
			t.Skip("nesting beyond encoding/json's limit")
		}
		p := recordParser{opts: opts}
		var got lineResult
		p.decodeLine(b, &got)
		if got.complete != want.complete {
			t.Fatalf("complete: scanner %v (%s), reference %v", got.complete, got.detail, want.complete)
		}
		var gotRecs []*parsed
		for i := range got.recs {
			gotRecs = append(gotRecs, &got.recs[i])
			checkIdent(t, gotRecs[i])
		}
		if d := cmp.Diff(want.recs, gotRecs, cmpRecords...); d != "" {
			t.Fatalf("records differ (-reference +scanner):\n%s", d)
		}
		// The light parse of pass 1 must see the same identities.
		lp := recordParser{light: true}
		var light lineResult
		lp.decodeLine(b, &light)
		if len(light.recs) != len(got.recs) {
			t.Fatalf("light decode found %d objects, full %d", len(light.recs), len(got.recs))
		}
		for i := range light.recs {
			l, g := light.recs[i], got.recs[i]
			if l.rec != nil {
				t.Fatal("light decode built a record")
			}
			l.rec, l.id, g.id = g.rec, ident{}, ident{}
			if d := cmp.Diff(g, l, cmpRecords...); d != "" {
				t.Fatalf("light decode differs (-full +light):\n%s", d)
			}
			checkIdent(t, &light.recs[i])
			if g := &got.recs[i]; !bytesEq(light.recs[i].id.uuid, g.id.uuid) || !bytesEq(light.recs[i].id.parent, g.id.parent) ||
				!bytesEq(light.recs[i].id.subtype, g.id.subtype) || light.recs[i].id.timeMs != g.id.timeMs {
				t.Fatalf("light identity %+v, full %+v", light.recs[i].id, g.id)
			}
		}
	})
}

func bytesEq(a, b []byte) bool { return string(a) == string(b) && (a == nil) == (b == nil) }

// checkIdent: the identity views of a parsed object say what its Record
// says (for a light parse, whatever the full parse's Record says is checked
// by comparing the two views).
func checkIdent(t *testing.T, pr *parsed) {
	t.Helper()
	id := &pr.id
	for _, f := range []struct {
		name string
		kind jkind
		b    []byte
	}{{"uuid", pr.uuid, id.uuid}, {"parentUuid", pr.parent, id.parent}, {"sessionId", pr.session, id.session},
		{"type", pr.typ, id.typ}, {"subtype", pr.subtype, id.subtype}, {"timestamp", pr.timestamp, id.ts}} {
		if (f.kind == jString) != (f.b != nil) {
			t.Fatalf("%s: kind %v, bytes %q", f.name, f.kind, f.b)
		}
	}
	r := pr.rec
	if r == nil {
		return
	}
	if string(id.uuid) != r.UUID || string(id.parent) != r.ParentUUID || string(id.session) != r.SessionID ||
		string(id.typ) != r.Type || string(id.subtype) != r.Subtype || string(id.cwd) != r.Cwd ||
		string(id.ts) != r.Timestamp || id.timeMs != r.TimeMs || id.timeOK != r.TimeOK {
		t.Fatalf("identity %+v disagrees with record %+v", id, r)
	}
}

// cmpRecords compares decoded records field by field. GoalContext has an
// Equal method with JavaScript semantics (nil equals nothing), which is not
// structural equality.
var cmpRecords = []cmp.Option{
	cmp.AllowUnexported(parsed{}),
	// id views the same bytes as rec; checkIdent compares them.
	cmpopts.IgnoreFields(parsed{}, "id"),
	cmp.Comparer(func(a, b *GoalContext) bool {
		if a == nil || b == nil {
			return a == b
		}
		return *a == *b
	}),
}
