// Package peers writes the decode benchmarks' Codex rollouts and Claude Code
// transcripts: each carries the tool outputs of the Qwen transcript of the
// same shape (shape.Outputs), in its own harness's records, so that every
// codec is measured on the same strings. The Codex and Claude codecs'
// BenchmarkDecode and the side-by-side benchmark of this package
// (decode_test.go) read them.
package peers

import (
	"bytes"
	"fmt"

	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// Qwen is the shape options every decode benchmark writes its Qwen
// transcript with (events/qwen's BenchmarkDecode uses the same).
func Qwen(name string, size int) shape.Options {
	return shape.Options{Shape: name, Bytes: int64(size), Seed: 1,
		SessionID: "5b1f0c7e-8d2a-4f3b-9c1d-2e4f6a8b0c1d", Cwd: "/work/demo", StartMs: 1767225600000}
}

func outputs(name string, size int) ([][]string, error) {
	return shape.Outputs(shape.Options{Shape: name, Bytes: int64(size), Seed: 1, Cwd: "/work/demo"})
}

// Codex writes about size bytes of rollout turns: task_started,
// turn_context, the prompt (model copy and user_message), reasoning, a
// shell call and its output per tool output of the shape's turn, the answer
// (event and item), a token count and task_complete.
func Codex(name string, size int) ([]byte, error) {
	outs, err := outputs(name, size)
	if err != nil {
		return nil, err
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
	return b.Bytes(), nil
}

// Claude writes about size bytes of turns shaped like Claude Code 2.1.x
// sessions: a person's prompt, a thinking line, then per tool output of the
// shape's turn a tool_use line sharing one message.id and the tool_result
// holding the output (in content and toolUseResult.stdout), the answer, and
// turn_duration; every record carries the common envelope (parentUuid,
// isSidechain, userType, cwd, sessionId, version, gitBranch, uuid,
// timestamp).
func Claude(name string, size int) ([]byte, error) {
	outs, err := outputs(name, size)
	if err != nil {
		return nil, err
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
	return b.Bytes(), nil
}
