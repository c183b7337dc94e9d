package claude_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// transcript writes about size bytes of turns shaped like Claude Code 2.1.x
// sessions: a person's prompt, a thinking line and a tool_use line sharing
// one message.id, the tool_result whose content is about outBytes of
// escaped listing, the answer, and turn_duration; every record carries the
// common envelope (parentUuid, isSidechain, userType, cwd, sessionId,
// version, gitBranch, uuid, timestamp).
func transcript(size, outBytes int) []byte {
	var out strings.Builder
	for i := 0; out.Len() < outBytes; i++ {
		fmt.Fprintf(&out, "drwxr-xr-x  5 user staff  160 Jan  1 00:00 dir-%04d\\n\\t\\\"quoted\\\" path/to/file_%d.go:%d: ok\\n", i, i, i*7)
	}
	output := out.String()
	var b bytes.Buffer
	parent := "null"
	for t := 0; b.Len() < size; t++ {
		ts := fmt.Sprintf(`"2026-11-30T%02d:%02d:%02d.%03dZ"`, t/3600%24, t/60%60, t%60, t%1000)
		for k, body := range []string{
			`"type":"user","message":{"role":"user","content":"Run the tests for package ` + fmt.Sprint(t) + `"},"promptId":"p-` + fmt.Sprint(t) + `","permissionMode":"default","promptSource":"typed","origin":{"kind":"human"}`,
			`"message":{"id":"msg_` + fmt.Sprint(t) + `a","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"thinking","thinking":"I should run the tests first.","signature":"EuYBCkQIBxgCKkB3"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4812,"output_tokens":61}},"requestId":"req_` + fmt.Sprint(t) + `","type":"assistant"`,
			`"message":{"id":"msg_` + fmt.Sprint(t) + `a","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"tool_use","id":"toolu_` + fmt.Sprint(t) + `","name":"Bash","input":{"command":"ls -la && go test ./...","description":"list and test"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":4812,"output_tokens":98}},"requestId":"req_` + fmt.Sprint(t) + `","type":"assistant"`,
			`"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_` + fmt.Sprint(t) + `","type":"tool_result","content":"` + output + `","is_error":false}]},"toolUseResult":{"stdout":"` + output + `","stderr":"","interrupted":false}`,
			`"message":{"id":"msg_` + fmt.Sprint(t) + `b","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"text","text":"All tests pass."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5902,"output_tokens":58}},"requestId":"req_` + fmt.Sprint(t) + `b","type":"assistant"`,
			`"type":"system","subtype":"turn_duration","durationMs":6150,"messageCount":5,"isMeta":false`,
		} {
			uuid := fmt.Sprintf(`"%08x-0000-4000-8000-%012x"`, t, k)
			b.WriteString(`{"parentUuid":` + parent + `,"isSidechain":false,"userType":"external","cwd":"/work/demo","sessionId":"5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4","version":"2.1.328","gitBranch":"main",` + body + `,"uuid":` + uuid + `,"timestamp":` + ts + "}\n")
			parent = uuid
		}
	}
	return b.Bytes()
}

// BenchmarkDecode runs the codec on two shapes: large tool outputs (the
// shape of the Qwen codec's BenchmarkDecode) and many small records.
func BenchmarkDecode(b *testing.B) {
	b.Run("large-outputs", func(b *testing.B) { turntest.BenchDecode(b, claude.Harness(), transcript(16<<20, 24<<10)) })
	b.Run("small-records", func(b *testing.B) { turntest.BenchDecode(b, claude.Harness(), transcript(16<<20, 200)) })
}

// BenchmarkVerdicts is decode, map, fold and decide over the same shapes.
func BenchmarkVerdicts(b *testing.B) {
	decide := func(r *bytes.Reader) error {
		_, err := turnverdict.DecideAll(turn.Read(r, claude.Harness()), turnverdict.Options{WriterStopped: true})
		return err
	}
	b.Run("large-outputs", func(b *testing.B) { turntest.BenchVerdicts(b, claude.Harness(), transcript(16<<20, 24<<10), decide) })
	b.Run("small-records", func(b *testing.B) { turntest.BenchVerdicts(b, claude.Harness(), transcript(16<<20, 200), decide) })
}

// TestBenchTranscriptDecides keeps the benchmark's input honest: every turn
// of it is a completed turn.
func TestBenchTranscriptDecides(t *testing.T) {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(transcript(1<<20, 2<<10)), claude.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil || len(ds) == 0 {
		t.Fatal(err, len(ds))
	}
	for _, d := range ds {
		if d.Verdict != turnverdict.Completed {
			t.Fatalf("%s", d.Describe())
		}
	}
}
