package codex_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// rollout writes about size bytes of turns: task_started, turn_context, the
// prompt (model copy and user_message), reasoning, a shell call whose output
// is about outBytes of escaped listing, the answer (event and item), a
// token count and task_complete. outBytes 24 KiB is the shape the Qwen
// codec's BenchmarkDecode uses; 200 bytes makes a session of small records.
func rollout(size, outBytes int) []byte {
	var out strings.Builder
	for i := 0; out.Len() < outBytes; i++ {
		fmt.Fprintf(&out, "drwxr-xr-x  5 user staff  160 Jan  1 00:00 dir-%04d\\n\\t\\\"quoted\\\" path/to/file_%d.go:%d: ok\\n", i, i, i*7)
	}
	output := out.String()
	var b bytes.Buffer
	for t := 0; b.Len() < size; t++ {
		ts := fmt.Sprintf("2026-11-30T%02d:%02d:%02d.%03dZ", t/3600%24, t/60%60, t%60, t%1000)
		id := fmt.Sprintf("019ad3a1-%04x-7000-8000-%012x", t%0xffff, t)
		line := func(s string) { b.WriteString(`{"timestamp":"` + ts + `",` + s + "}\n") }
		line(`"type":"event_msg","payload":{"type":"task_started","turn_id":"` + id + `","model_context_window":272000}`)
		line(`"type":"turn_context","payload":{"turn_id":"` + id + `","cwd":"/work/demo","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5.1-codex","summary":"auto"}`)
		line(`"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Run the tests for package ` + fmt.Sprint(t) + `"}]}`)
		line(`"type":"event_msg","payload":{"type":"user_message","message":"Run the tests for package ` + fmt.Sprint(t) + `","images":[]}`)
		line(`"type":"response_item","payload":{"type":"reasoning","id":"rs_` + id[:8] + `","summary":[{"type":"summary_text","text":"**Running the tests**"}],"encrypted_content":"gAAAAABpQ2Vh4tq0aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5yZ7"}`)
		line(`"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls -la && go test ./...\"]}","call_id":"call_` + id[:8] + `"}`)
		line(`"type":"response_item","payload":{"type":"function_call_output","call_id":"call_` + id[:8] + `","output":"` + output + `"}`)
		line(`"type":"event_msg","payload":{"type":"agent_message","message":"All tests pass.","phase":"final_answer"}`)
		line(`"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All tests pass."}],"phase":"final_answer"}`)
		line(`"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5120,"cached_input_tokens":4096,"output_tokens":61,"reasoning_output_tokens":32,"total_tokens":5181}},"rate_limits":null}`)
		line(`"type":"event_msg","payload":{"type":"task_complete","turn_id":"` + id + `","last_agent_message":"All tests pass."}`)
	}
	return b.Bytes()
}

// BenchmarkDecode runs the codec on two shapes: large tool outputs (as the
// Qwen codec's BenchmarkDecode) and many small records.
func BenchmarkDecode(b *testing.B) {
	b.Run("large-outputs", func(b *testing.B) { turntest.BenchDecode(b, codex.Harness(), rollout(16<<20, 24<<10)) })
	b.Run("small-records", func(b *testing.B) { turntest.BenchDecode(b, codex.Harness(), rollout(16<<20, 200)) })
}

// BenchmarkVerdicts is decode, map, fold and decide over the same shapes.
func BenchmarkVerdicts(b *testing.B) {
	decide := func(r *bytes.Reader) error {
		_, err := turnverdict.DecideAll(turn.Read(r, codex.Harness()), turnverdict.Options{WriterStopped: true})
		return err
	}
	b.Run("large-outputs", func(b *testing.B) { turntest.BenchVerdicts(b, codex.Harness(), rollout(16<<20, 24<<10), decide) })
	b.Run("small-records", func(b *testing.B) { turntest.BenchVerdicts(b, codex.Harness(), rollout(16<<20, 200), decide) })
}

// TestBenchRolloutDecides keeps the benchmark's input honest: every turn of
// it is a completed turn.
func TestBenchRolloutDecides(t *testing.T) {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(rollout(1<<20, 2<<10)), codex.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil || len(ds) == 0 {
		t.Fatal(err, len(ds))
	}
	for _, d := range ds {
		if d.Verdict != turnverdict.Completed {
			t.Fatalf("%s", d.Describe())
		}
	}
}
