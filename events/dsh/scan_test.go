package dsh

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// The oracle for the fast path is the encoding/json path it replaced
// (parseRecordJSON, decodePayloadJSON, compactJSON): ParseRecord,
// DecodePayload and Record.Canonical must answer exactly what those answer —
// the same value, or an error with the same text and the same sentinel.

var oracleSentinels = []error{ErrNotJSON, ErrNotEvent, ErrNotHeader, ErrMalformedData, ErrNotSerializable}

func sameError(t *testing.T, what string, in []byte, got, want error) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s(%q): error %v, oracle %v", what, in, got, want)
	}
	if got == nil {
		return
	}
	if got.Error() != want.Error() {
		t.Fatalf("%s(%q): error %q, oracle %q", what, in, got, want)
	}
	for _, s := range oracleSentinels {
		if errors.Is(got, s) != errors.Is(want, s) {
			t.Fatalf("%s(%q): errors.Is(%v) differs from the oracle's %v", what, in, s, want)
		}
	}
}

var payloadTypes = []string{
	TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeStepEnd, TypeUserMessage, TypeContextMessage,
	TypeAssistantChunk, TypeAssistantMessage, TypeToolCall, TypeToolResult, TypeSteeringMessage,
	TypeUsage, TypeError, "x/unknown",
}

// checkAgainstOracle compares every decoder the fast path serves with its
// encoding/json reference on one input.
func checkAgainstOracle(t *testing.T, line []byte, typ uint8) {
	got, gotErr := ParseRecord(line)
	want, wantErr := parseRecordJSON(line)
	sameError(t, "ParseRecord", line, gotErr, wantErr)
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRecord(%q) = %+v, oracle %+v", line, got, want)
	}
	if fast, ok := fastParseRecord(line); ok && (wantErr != nil || !reflect.DeepEqual(fast, want)) {
		t.Fatalf("fastParseRecord(%q) accepted %+v, oracle %+v, %v", line, fast, want, wantErr)
	}
	_, fastOK := fastParseRecord(line)
	for _, buf := range [][]byte{nil, make([]byte, 3, 8), make([]byte, 1, 1<<12)} {
		scratch := bytes.Clone(line)
		gotA, bufA, gotAErr := ParseRecordAppend(buf, scratch)
		clear(scratch) // the record must not share memory with the line
		sameError(t, "ParseRecordAppend", line, gotAErr, wantErr)
		switch {
		case gotAErr != nil || !fastOK:
			if len(bufA) != len(buf) || cap(bufA) != cap(buf) {
				t.Fatalf("ParseRecordAppend(%q) took the encoding/json path and grew its buffer", line)
			}
		case cap(gotA.Data) != len(gotA.Data):
			t.Fatalf("ParseRecordAppend(%q) data has spare capacity", line)
		case len(gotA.Data) > 0 && &bufA[len(bufA)-len(gotA.Data)] != &gotA.Data[0]:
			t.Fatalf("ParseRecordAppend(%q) data is not the end of the returned buffer", line)
		}
		if gotAErr == nil && !reflect.DeepEqual(gotA, want) {
			t.Fatalf("ParseRecordAppend(%q) = %+v, oracle %+v", line, gotA, want)
		}
	}
	checkPayload(t, payloadTypes[int(typ)%len(payloadTypes)], line)
	if wantErr == nil {
		checkPayload(t, want.Type, want.Data)
	}

	gotH, gotHErr := ParseHeader(line)
	wantH, wantHErr := parseHeaderJSON(line)
	sameError(t, "ParseHeader", line, gotHErr, wantHErr)
	if gotHErr == nil && !reflect.DeepEqual(gotH, wantH) {
		t.Fatalf("ParseHeader(%q) = %+v, oracle %+v", line, gotH, wantH)
	}
	gotS, gotSErr := ParseSummary(line)
	wantS, wantSErr := parseSummaryJSON(line)
	sameError(t, "ParseSummary", line, gotSErr, wantSErr)
	if gotSErr == nil && !reflect.DeepEqual(gotS, wantS) {
		t.Fatalf("ParseSummary(%q) = %+v, oracle %+v", line, gotS, wantS)
	}

	rec := Record{Type: "x", Seq: 1, Data: line}
	gotC, gotCErr := rec.Canonical()
	gotLine, gotLineErr := AppendCanonical([]byte("prefix"), rec)
	wantC, wantCErr := rec.canonicalJSON()
	sameError(t, "Canonical", line, gotCErr, wantCErr)
	if gotCErr == nil && !bytes.Equal(gotC.Data, wantC.Data) {
		t.Fatalf("Canonical(%q) = %q, oracle %q", line, gotC.Data, wantC.Data)
	}
	if gotCErr == nil && len(line) > 0 && &gotC.Data[0] == &line[0] {
		t.Fatalf("Canonical(%q) shares memory with its input", line)
	}
	sameError(t, "AppendCanonical", line, gotLineErr, wantCErr)
	wantLine := []byte("prefix")
	if wantCErr == nil {
		wantLine = AppendRecord(wantLine, wantC)
	}
	if !bytes.Equal(gotLine, wantLine) {
		t.Fatalf("AppendCanonical(%q) = %q, oracle %q", line, gotLine, wantLine)
	}
}

func checkPayload(t *testing.T, typ string, data []byte) {
	t.Helper()
	got, gotErr := DecodePayload(typ, data)
	want, wantErr := decodePayloadJSON(typ, data)
	sameError(t, "DecodePayload("+typ+")", data, gotErr, wantErr)
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodePayload(%s, %q) = %#v, oracle %#v", typ, data, got, want)
	}
	if fast, ok := fastDecodePayload(typ, data); ok {
		// The fast path does not validate; what it decoded must still be
		// what encoding/json decodes.
		var ref Payload
		switch {
		case wantErr == nil:
			ref = want
		case errors.Is(wantErr, ErrMalformedData) && validate(fast) != nil:
			return // the oracle failed only on validation, as DecodePayload then does
		default:
			t.Fatalf("fastDecodePayload(%s, %q) accepted %#v, oracle %v", typ, data, fast, wantErr)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("fastDecodePayload(%s, %q) = %#v, oracle %#v", typ, data, fast, ref)
		}
	}
}

// trickyLines are the inputs where a hand-written JSON reader usually
// disagrees with encoding/json.
var trickyLines = []string{
	// numbers
	`{"type":"turn/end","seq":1e2,"time":5.0,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	`{"type":"turn/end","seq":-0,"time":-0,"data":{"turn":-0,"reason":{"kind":"completed"}}}`,
	`{"type":"turn/end","seq":1e400,"time":1,"data":{}}`,
	`{"type":"x","seq":9007199254740993,"time":9223372036854775807,"data":1}`,
	`{"type":"x","seq":9223372036854775808,"time":-9223372036854775808,"data":1}`,
	`{"type":"x","seq":0,"time":-9223372036854775809,"data":1}`,
	`{"type":"x","seq":1.5,"time":1,"data":1}`,
	`{"type":"x","seq":01,"time":1,"data":1}`,
	`{"type":"x","seq":1.,"time":1,"data":1}`,
	`{"type":"x","seq":-,"time":1,"data":1}`,
	`{"type":"x","seq":1E+2,"time":1e-0,"data":1}`,
	`{"type":"x","seq":"5","time":1,"data":1}`,
	`{"type":"step/start","seq":0,"time":1,"data":{"turn":1.0,"step":2}}`,
	`{"type":"step/start","seq":0,"time":1,"data":{"turn":1e3,"step":2}}`,
	`{"type":"step/start","seq":0,"time":1,"data":{"turn":99999999999999999999,"step":2}}`,
	// strings
	`{"type":"turn\/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"m\u0065ssage"}}}`,
	`{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"\ud83d\ude00 \ud800 \udc00\ud800x \ud800\u0041"}],"source":{"kind":"user"}}}`,
	"{\"type\":\"user/message\",\"seq\":0,\"time\":1,\"data\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xed\xa0\x80 é \xe2\x82\"}],\"source\":{\"kind\":\"user\"}}}",
	"{\"type\":\"x\xff\",\"seq\":0,\"time\":1,\"data\":{}}",
	"{\"type\":\"x\",\"seq\":0,\"time\":1,\"data\":\"a\x01b\"}",
	`{"type":"x","seq":0,"time":1,"data":"\x"}`,
	`{"type":"x","seq":0,"time":1,"data":"\u12"}`,
	`{"type":"x","seq":0,"time":1,"data":"\'"}`,
	`{"type":"","seq":0,"time":1,"data":{}}`,
	`{"type":null,"seq":0,"time":1,"data":{}}`,
	// keys: duplicates, case folding, escapes, unknown members
	`{"type":"x","type":"y","seq":0,"time":1,"data":{}}`,
	`{"type":"x","TYPE":"y","seq":0,"time":1,"data":{}}`,
	`{"Type":"x","Seq":0,"TIME":1,"Data":{}}`,
	`{"ty\u0070e":"x","seq":0,"time":1,"data":{}}`,
	"{\"type\":\"x\",\"seq\":0,\"time\":1,\"data\":{},\"\u212a\":1}",
	`{"type":"x","seq":0,"time":1,"data":{},"extra":[1,{"a":null}],"":true}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"a","source":{"kind":"user"}},"trigger":{"kind":"b"}}}`,
	`{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"a"}],"content":[{"type":"x"}],"source":{"kind":"user"}}}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","Kind":"x"}}}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","ſource":{"kind":"user"}}}}`,
	// nulls and wrong types
	`{"type":"x","seq":0,"time":1,"data":null}`,
	`{"type":"x","seq":null,"time":1,"data":{}}`,
	`{"type":"x","seq":0,"time":1}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":null,"trigger":{"kind":"message","source":null}}}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":null}}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":"1","trigger":{"kind":"message"}}}`,
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":5}}}`,
	`{"type":"tool/result","seq":0,"time":1,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":null,"error":null}}`,
	`{"type":"tool/result","seq":0,"time":1,"data":{"turn":1,"step":1,"callId":"c","content":null,"isError":true,"error":{"name":"n","code":"c"}}}`,
	`{"type":"tool/result","seq":0,"time":1,"data":{"turn":1,"step":1,"callId":"c","content":[null]}}`,
	`{"type":"tool/result","seq":0,"time":1,"data":{"turn":1,"step":1,"callId":"c","content":[{"type":"tool-result","toolCallId":"c","content":null,"isError":false,"cache":{"k" : [1, 2]}}]}}`,
	`{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":null,"usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":null,"reasoningTokens":3},"reason":{"kind":"error","message":"m","code":null},"name":null}}}`,
	`{"type":"usage","seq":0,"time":1,"data":{"turn":1,"step":1,"usage":[]}}`,
	`{"type":"error","seq":0,"time":1,"data":{"turn":1,"step":1,"message":"m","code":"c"}}`,
	`{"type":"steering/message","seq":0,"time":1,"data":{"turn":1,"content":[{"type":"image","url":"u","mimeType":"image/png"}],"source":{"kind":"agent","agentId":"a"}}}`,
	`{"type":"context/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"t"}],"source":{"kind":"plugin","plugin":"p"}}}`,
	`{"type":"assistant/message","seq":0,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","name":"x"}]}}`,
	// headers and summaries
	`{"type":"session","version":1,"id":"s","createdAt":1781000000000,"cwd":"/p","parentSession":"q"}`,
	`{"type":"session","version":1.5e0,"id":"s","createdAt":-0,"cwd":null,"parentSession":null,"x":[]}`,
	`{"type":"session","version":"1","id":"s","createdAt":1}`,
	`{"type":"session","version":1,"id":"s","createdAt":1e400}`,
	`{"type":"session","version":1,"id":null,"createdAt":1}`,
	`{"type":"session","version":1,"id":"s"}`,
	`{"type":"Session","version":1,"id":"s","createdAt":1}`,
	`{"type":"session","version":1,"id":"s","createdAt":1,"cwd":5}`,
	`{"type":"session","version":1,"id":"s","createdAt":1,"CWD":"/x"}`,
	`{"type":"session","type":"session","version":1,"id":"s","createdAt":1}`,
	`{"updatedAt":1781000000000,"title":"t","firstPrompt":"p\u00e9"}`,
	`{"updatedAt":null,"title":null}`,
	`{"updatedAt":"1"}`,
	`{"updatedAt":1e999}`,
	`{"title":7}`,
	// structure: whitespace, nesting, trailing bytes
	" \t\r\n{ \"type\" : \"x\" , \"seq\" : 0 , \"time\" : 1 , \"data\" : [ 1 , { } , [ ] ] } \r\n ",
	`{"type":"x","seq":0,"time":1,"data":[[[[[[[[[[[[[[[[[[[[{"a":[[[[]]]]}]]]]]]]]]]]]]]]]]]]}`,
	`{"type":"x","seq":0,"time":1,"data":{}}x`,
	`{"type":"x","seq":0,"time":1,"data":{}}{}`,
	`{"type":"x","seq":0,"time":1,"data":{},}`,
	`{"type":"x","seq":0,"time":1,"data":[1,]}`,
	`{"type":"x","seq":0,"time":1,"data":tru}`,
	`{"type":"x","seq":0,"time":1,"data":{}`,
	`{"type":"x" "seq":0}`,
	`{,}`, `{}`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{"a"}`, `{"a":}`, "\x00{}",
	"{\"type\":\"x\",\"seq\":0,\"time\":1,\"data\":{}}\x00",
}

func oracleSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, s := range trickyLines {
		seeds = append(seeds, []byte(s))
	}
	files := []string{"testdata/scenarios/codec.txt", "../../examples/dsh/crashed-session.jsonl", "../../adapters/dshlog/testdata/recover_v1.txt"}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("{")) {
				seeds = append(seeds, l)
			}
		}
	}
	deep := strings.Repeat("[", maxFastDepth+2) + strings.Repeat("]", maxFastDepth+2)
	seeds = append(seeds, []byte(`{"type":"x","seq":0,"time":1,"data":`+deep+`}`))
	tooDeep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	seeds = append(seeds, []byte(`{"type":"x","seq":0,"time":1,"data":`+tooDeep+`}`))
	return seeds
}

func TestFastPathMatchesEncodingJSON(t *testing.T) {
	for _, line := range oracleSeeds(t) {
		for typ := range len(payloadTypes) {
			checkAgainstOracle(t, line, uint8(typ))
		}
	}
}

func FuzzFastPathMatchesEncodingJSON(f *testing.F) {
	for i, line := range oracleSeeds(f) {
		f.Add(line, uint8(i))
	}
	f.Fuzz(checkAgainstOracle)
}

// The fast path must serve what the writer writes, or it saves nothing:
// every record of the shipped examples and of the encoder's own output,
// escapes and non-ASCII text included, decodes without encoding/json.
func TestFastPathServesWrittenRecords(t *testing.T) {
	var lines [][]byte
	b, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range bytes.Split(b, []byte("\n")) {
		if i > 0 && len(l) > 0 && bytes.HasSuffix(l, []byte("}")) {
			lines = append(lines, l)
		}
	}
	name, code, msg := "bash", "E1", "boom"
	yes := true
	in, out := int64(3), int64(4)
	for i, p := range []Payload{
		&TurnStart{Turn: 1, Trigger: Trigger{Kind: "injection", Source: &Source{Kind: "plugin", Plugin: "bg"}}},
		&TurnEnd{Turn: 1, Reason: Reason{Kind: "error", Message: &msg, Code: &code}},
		&UserMessage{Content: []Block{{Type: "text", Text: "héllo \"quoted\"\n\t\u2028 \U0001F600 <&>"}}, Source: Source{Kind: "user"}},
		&ContextMessage{Content: []Block{{Type: "image", URL: "data:x", MimeType: &name}}, Source: Source{Kind: "agent", AgentID: "a"}},
		&AssistantChunk{Turn: 1, Step: 2, Chunk: Chunk{Type: "tool-call-delta", Index: 1, ID: "c", Name: &name, ArgumentsDelta: `{"a":`}},
		&AssistantChunk{Turn: 1, Step: 2, Chunk: Chunk{Type: "usage", Usage: &Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: &in, ReasoningTokens: &out}}},
		&AssistantChunk{Turn: 1, Step: 2, Chunk: Chunk{Type: "finish", Reason: &FinishReason{Kind: "error", Message: &msg}}},
		&AssistantMessage{Turn: 1, Step: 2, Content: []Block{{Type: "reasoning", Text: "r"}, {Type: "tool-call", ID: "c", Name: "bash", Arguments: `{"command":"ls"}`}}},
		&ToolCall{Turn: 1, Step: 2, CallID: "c", Name: "bash", Arguments: `{"command":"ls"}`},
		&ToolResult{Turn: 1, Step: 2, CallID: "c", Content: []Block{{Type: "tool-result", ToolCallID: "c", Content: []byte(`[{"a":1}]`), IsError: &yes}}, IsError: true, Error: &ToolError{Name: "n", Code: "c"}},
		&SteeringMessage{Turn: 1, Content: []Block{{Type: "text", Text: "wait"}}, Source: Source{Kind: "user"}},
		&UsageEvent{Turn: 1, Step: 2, Usage: Usage{InputTokens: 10, OutputTokens: 20}},
		&ErrorEvent{Turn: 1, Step: 2, Message: "m", Code: &code},
		&StepStart{Turn: 1, Step: 2}, &StepEnd{Turn: 1, Step: 2},
	} {
		lines = append(lines, AppendRecord(nil, NewRecord(int64(i), 1781000000000, p)))
	}
	cwd, title := "/home/u/proj é", "fix \"the\" bug"
	header := AppendHeader(nil, Header{Version: 1, ID: "sess-01", CreatedAt: 1781000000000, Cwd: &cwd, ParentSession: &name})
	if _, ok := fastParseHeader(header); !ok {
		t.Fatalf("fast path declined a written header: %s", header)
	}
	summary := AppendSummary(nil, Summary{UpdatedAt: 1781000000001, Title: &title, FirstPrompt: &cwd})
	if _, ok := fastParseSummary(summary); !ok {
		t.Fatalf("fast path declined a written summary: %s", summary)
	}
	checkAgainstOracle(t, header, 0)
	checkAgainstOracle(t, summary, 0)
	for _, l := range lines {
		rec, ok := fastParseRecord(l)
		if !ok {
			t.Fatalf("fast path declined a written record: %s", l)
		}
		if _, ok := fastDecodePayload(rec.Type, rec.Data); !ok {
			t.Fatalf("fast path declined a written payload: %s", l)
		}
		checkAgainstOracle(t, l, 0)
	}
}

// benchLines are the lines of a typical session: the shapes the simulator
// writes, escapes included.
func benchLines() [][]byte {
	user := &Source{Kind: "user"}
	var lines [][]byte
	for i, p := range []Payload{
		&TurnStart{Turn: 1, Trigger: Trigger{Kind: "message", Source: user}},
		&UserMessage{Content: []Block{{Type: "text", Text: "please do the next thing"}}, Source: *user},
		&StepStart{Turn: 1, Step: 1},
		&AssistantMessage{Turn: 1, Step: 1, Content: []Block{{Type: "tool-call", ID: "call_1_1_0", Name: "bash", Arguments: `{"command":"ls"}`}}},
		&ToolCall{Turn: 1, Step: 1, CallID: "call_1_1_0", Name: "bash", Arguments: `{"command":"ls"}`},
		&ToolResult{Turn: 1, Step: 1, CallID: "call_1_1_0", Content: []Block{{Type: "text", Text: "ok"}}},
		&StepEnd{Turn: 1, Step: 1},
		&TurnEnd{Turn: 1, Reason: Reason{Kind: "completed"}},
	} {
		lines = append(lines, AppendRecord(nil, NewRecord(int64(i), 1781000000000+int64(i), p)))
	}
	return lines
}

// BenchmarkParseRecord is one session's worth of event lines per op,
// envelope and then payload, through the fast path and through the
// encoding/json reference.
func BenchmarkParseRecord(b *testing.B) {
	lines := benchLines()
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				r, err := ParseRecord(l)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := DecodePayload(r.Type, r.Data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				r, err := parseRecordJSON(l)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := decodePayloadJSON(r.Type, r.Data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestFastPathRandomRecords drives the comparison with well-formed records
// the byte-level fuzzer rarely assembles: every payload type with random
// strings (escapes, controls, surrogates, invalid UTF-8), random optional
// members, and whitespace sprinkled between tokens.
func TestFastPathRandomRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "\u2028", "😀", "\xff", "\xed\xa0\x80", "\ufffd", "<", "&"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	opt := func() *string {
		if rng.IntN(2) == 0 {
			return nil
		}
		s := str()
		return &s
	}
	num := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return -rng.Int64()
		}
		return rng.Int64N(1000)
	}
	optNum := func() *int64 {
		if rng.IntN(2) == 0 {
			return nil
		}
		n := num()
		return &n
	}
	src := func() Source {
		return Source{Kind: []string{"user", "plugin", "agent", str()}[rng.IntN(4)], Plugin: str(), AgentID: str()}
	}
	block := func() Block {
		yes := rng.IntN(2) == 0
		b := Block{Type: []string{"text", "reasoning", "tool-call", "tool-result", "image", str()}[rng.IntN(6)],
			Text: str(), ID: str(), Name: str(), Arguments: str(), ToolCallID: str(), URL: str(), MimeType: opt()}
		if rng.IntN(2) == 0 {
			b.IsError = &yes
		}
		if rng.IntN(2) == 0 {
			b.Content = []byte(`[{"type":"text","text":"x"}, 1e3, null]`)
		}
		if rng.IntN(3) == 0 {
			b.Cache = []byte(`{"ttl":"5m"}`)
		}
		return b
	}
	blocks := func() []Block {
		out := []Block{}
		for range rng.IntN(3) {
			out = append(out, block())
		}
		return out
	}
	payload := func() Payload {
		switch rng.IntN(13) {
		case 0:
			tr := Trigger{Kind: str()}
			if rng.IntN(2) == 0 {
				s := src()
				tr.Source = &s
			}
			return &TurnStart{Turn: num(), Trigger: tr}
		case 1:
			return &TurnEnd{Turn: num(), Reason: Reason{Kind: str(), Reason: opt(), Message: opt(), Code: opt()}}
		case 2:
			return &StepStart{Turn: num(), Step: num()}
		case 3:
			return &StepEnd{Turn: num(), Step: num()}
		case 4:
			return &UserMessage{Content: blocks(), Source: src()}
		case 5:
			return &ContextMessage{Content: blocks(), Source: src()}
		case 6:
			c := Chunk{Type: []string{"block-start", "text-delta", "tool-call-delta", "block-end", "usage", "finish"}[rng.IntN(6)],
				Index: num(), BlockType: str(), Text: str(), ID: str(), Name: opt(), ArgumentsDelta: str()}
			b := block()
			c.Block = &b
			c.Usage = &Usage{InputTokens: num(), OutputTokens: num(), CacheReadTokens: optNum(), CacheWriteTokens: optNum(), ReasoningTokens: optNum()}
			c.Reason = &FinishReason{Kind: str(), Message: opt(), Code: opt()}
			return &AssistantChunk{Turn: num(), Step: num(), Chunk: c}
		case 7:
			return &AssistantMessage{Turn: num(), Step: num(), Content: blocks()}
		case 8:
			return &ToolCall{Turn: num(), Step: num(), CallID: str(), Name: str(), Arguments: str()}
		case 9:
			r := &ToolResult{Turn: num(), Step: num(), CallID: str(), Content: blocks(), IsError: rng.IntN(2) == 0}
			if rng.IntN(2) == 0 {
				r.Error = &ToolError{Name: str(), Code: str()}
			}
			return r
		case 10:
			return &SteeringMessage{Turn: num(), Content: blocks(), Source: src()}
		case 11:
			return &UsageEvent{Turn: num(), Step: num(), Usage: Usage{InputTokens: num(), OutputTokens: num(), CacheReadTokens: optNum()}}
		}
		return &ErrorEvent{Turn: num(), Step: num(), Message: str(), Code: opt()}
	}
	// sprinkle inserts whitespace after structural bytes outside strings.
	sprinkle := func(line []byte) []byte {
		var out []byte
		inString := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			out = append(out, c)
			switch {
			case inString && c == '\\':
				i++
				out = append(out, line[i])
			case c == '"':
				inString = !inString
			case !inString && strings.IndexByte("{}[]:,", c) >= 0 && rng.IntN(3) == 0:
				out = append(out, " \t\r\n"[rng.IntN(4)])
			}
		}
		return out
	}
	fast := 0
	for i := range 10000 {
		line := AppendRecord(nil, NewRecord(num(), num(), payload()))
		if i%2 == 1 {
			line = sprinkle(line)
		}
		if _, ok := fastParseRecord(line); ok {
			fast++
		}
		checkAgainstOracle(t, line, uint8(i))
	}
	if fast < 5000 {
		t.Fatalf("the fast path took only %d of 10000 records", fast)
	}
}
