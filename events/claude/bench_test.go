package claude_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// transcript writes about size bytes of turns shaped like Claude Code 2.1.x
// sessions: a person's prompt, a thinking line, then per tool output of the
// shape's turn (simulations/bench/shape, the strings the Qwen codec's
// BenchmarkDecode reads) a tool_use line sharing one message.id and the
// tool_result holding the output (in content and toolUseResult.stdout), the
// answer, and turn_duration; every record carries the common envelope
// (parentUuid, isSidechain, userType, cwd, sessionId, version, gitBranch,
// uuid, timestamp).
func transcript(tb testing.TB, name string, size int) []byte {
	outs, err := shape.Outputs(shape.Options{Shape: name, Bytes: int64(size), Seed: 1, Cwd: "/work/demo"})
	if err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	parent := "null"
	for t := 0; b.Len() < size; t++ {
		ts := fmt.Sprintf(`"2026-11-30T%02d:%02d:%02d.%03dZ"`, t/3600%24, t/60%60, t%60, t%1000)
		bodies := []string{
			`"type":"user","message":{"role":"user","content":"Run the tests for package ` + fmt.Sprint(t) + `"},"promptId":"p-` + fmt.Sprint(t) + `","permissionMode":"default","promptSource":"typed","origin":{"kind":"human"}`,
			`"message":{"id":"msg_` + fmt.Sprint(t) + `a","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"thinking","thinking":"I should run the tests first.","signature":"EuYBCkQIBxgCKkB3"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4812,"output_tokens":61}},"requestId":"req_` + fmt.Sprint(t) + `","type":"assistant"`,
		}
		for k, out := range outs[t%len(outs)] {
			id := fmt.Sprintf("toolu_%d_%d", t, k)
			q := shape.Quote(out)
			bodies = append(bodies,
				`"message":{"id":"msg_`+fmt.Sprint(t)+`a","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"tool_use","id":"`+id+`","name":"Bash","input":{"command":"ls -la && go test ./...","description":"list and test"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":4812,"output_tokens":98}},"requestId":"req_`+fmt.Sprint(t)+`","type":"assistant"`,
				`"type":"user","message":{"role":"user","content":[{"tool_use_id":"`+id+`","type":"tool_result","content":`+q+`,"is_error":false}]},"toolUseResult":{"stdout":`+q+`,"stderr":"","interrupted":false}`)
		}
		bodies = append(bodies,
			`"message":{"id":"msg_`+fmt.Sprint(t)+`b","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"text","text":"All tests pass."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5902,"output_tokens":58}},"requestId":"req_`+fmt.Sprint(t)+`b","type":"assistant"`,
			`"type":"system","subtype":"turn_duration","durationMs":6150,"messageCount":5,"isMeta":false`)
		for k, body := range bodies {
			uuid := fmt.Sprintf(`"%08x-0000-4000-8000-%012x"`, t, k)
			b.WriteString(`{"parentUuid":` + parent + `,"isSidechain":false,"userType":"external","cwd":"/work/demo","sessionId":"5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4","version":"2.1.328","gitBranch":"main",` + body + `,"uuid":` + uuid + `,"timestamp":` + ts + "}\n")
			parent = uuid
		}
	}
	return b.Bytes()
}

// BenchmarkDecode runs the codec on 16 MiB of each content shape of
// simulations/bench/shape, as the Qwen codec's BenchmarkDecode does.
func BenchmarkDecode(b *testing.B) {
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchDecode(b, claude.Harness(), transcript(b, name, 16<<20)) })
	}
}

// BenchmarkVerdicts is decode, map, fold and decide over the same shapes.
func BenchmarkVerdicts(b *testing.B) {
	decide := func(r *bytes.Reader) error {
		_, err := turnverdict.DecideAll(turn.Read(r, claude.Harness()), turnverdict.Options{WriterStopped: true})
		return err
	}
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchVerdicts(b, claude.Harness(), transcript(b, name, 16<<20), decide) })
	}
}

// TestBenchTranscriptDecides keeps the benchmark's input honest: every turn
// of it is a completed turn.
func TestBenchTranscriptDecides(t *testing.T) {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(transcript(t, "mixed", 1<<20)), claude.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil || len(ds) == 0 {
		t.Fatal(err, len(ds))
	}
	for _, d := range ds {
		if d.Verdict != turnverdict.Completed {
			t.Fatalf("%s", d.Describe())
		}
	}
}
