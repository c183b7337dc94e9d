package codex_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// rollout writes about size bytes of turns: task_started, turn_context, the
// prompt (model copy and user_message), reasoning, a shell call and its
// output per tool output of the shape's turn (simulations/bench/shape, the
// strings the Qwen codec's BenchmarkDecode reads), the answer (event and
// item), a token count and task_complete.
func rollout(tb testing.TB, name string, size int) []byte {
	outs, err := shape.Outputs(shape.Options{Shape: name, Bytes: int64(size), Seed: 1, Cwd: "/work/demo"})
	if err != nil {
		tb.Fatal(err)
	}
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
		for k, out := range outs[t%len(outs)] {
			call := fmt.Sprintf("call_%s_%d", id[:8], k)
			line(`"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls -la && go test ./...\"]}","call_id":"` + call + `"}`)
			line(`"type":"response_item","payload":{"type":"function_call_output","call_id":"` + call + `","output":` + shape.Quote(out) + `}`)
		}
		line(`"type":"event_msg","payload":{"type":"agent_message","message":"All tests pass.","phase":"final_answer"}`)
		line(`"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All tests pass."}],"phase":"final_answer"}`)
		line(`"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5120,"cached_input_tokens":4096,"output_tokens":61,"reasoning_output_tokens":32,"total_tokens":5181}},"rate_limits":null}`)
		line(`"type":"event_msg","payload":{"type":"task_complete","turn_id":"` + id + `","last_agent_message":"All tests pass."}`)
	}
	return b.Bytes()
}

// BenchmarkDecode runs the codec on 16 MiB of each content shape of
// simulations/bench/shape, as the Qwen codec's BenchmarkDecode does.
func BenchmarkDecode(b *testing.B) {
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchDecode(b, codex.Harness(), rollout(b, name, 16<<20)) })
	}
}

// BenchmarkVerdicts is decode, map, fold and decide over the same shapes.
func BenchmarkVerdicts(b *testing.B) {
	decide := func(r *bytes.Reader) error {
		_, err := turnverdict.DecideAll(turn.Read(r, codex.Harness()), turnverdict.Options{WriterStopped: true})
		return err
	}
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) { turntest.BenchVerdicts(b, codex.Harness(), rollout(b, name, 16<<20), decide) })
	}
}

// TestBenchRolloutDecides keeps the benchmark's input honest: every turn of
// it is a completed turn.
func TestBenchRolloutDecides(t *testing.T) {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(rollout(t, "mixed", 1<<20)), codex.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil || len(ds) == 0 {
		t.Fatal(err, len(ds))
	}
	for _, d := range ds {
		if d.Verdict != turnverdict.Completed {
			t.Fatalf("%s", d.Describe())
		}
	}
}
