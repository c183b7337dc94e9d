package shape

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// turns writes one prompt's turn per call, in the chosen content shape.
type turns struct {
	rng      *rand.Rand
	outputKB int
	w        *transcript
	pools    map[string][]string
	outs     *[][]string // when set, each turn's tool outputs (Outputs)
	files    []string    // the files shape's outputs, cycled
}

var shapes = map[string]func(g *turns, turn int, pid string){
	"ls":    func(g *turns, turn int, pid string) { g.toolTurn(turn, pid, g.output("ls", 64)) },
	"dense": func(g *turns, turn int, pid string) { g.toolTurn(turn, pid, g.output("dense", 64)) },
	"code":  func(g *turns, turn int, pid string) { g.toolTurn(turn, pid, g.output("code", 256)) },
	"small": (*turns).smallTurn,
	"mixed": (*turns).mixedTurn,
	"files": (*turns).fileTurn,
}

// fileTurn reads the turn's file: one read_file call whose output is the
// next of the given files.
func (g *turns) fileTurn(turn int, pid string) {
	g.user(turn, pid, "read the next file and explain it")
	call := fmt.Sprintf("call-%06d", turn)
	g.call(fmt.Sprintf("a-%06d", turn), call, "read_file", map[string]any{"absolute_path": fmt.Sprintf("/bench/workspace/f%d", turn%len(g.files))}, "")
	g.result(fmt.Sprintf("r-%06d", turn), call, "read_file", g.files[turn%len(g.files)])
	g.reply(fmt.Sprintf("m-%06d", turn), "The file holds part of the project.")
}

// output returns a tool output of the kind, about kb KiB (or -output-kb),
// from a small pool so that generating 600 MB stays quick.
func (g *turns) output(kind string, kb int) string {
	if g.outputKB > 0 {
		kb = g.outputKB
	}
	return g.sized(kind, kb<<10)
}

func (g *turns) sized(kind string, n int) string {
	if g.pools == nil {
		g.pools = map[string][]string{}
	}
	key := fmt.Sprintf("%s/%d", kind, n)
	pool := g.pools[key]
	if len(pool) < 8 {
		var out string
		switch kind {
		case "ls":
			out = strings.Repeat("drwxr-xr-x  2 user user 4096 Jan  1 00:00 some/long/path/name.go\n", max(1, n/64))
		case "code":
			out = g.fill(n, g.goSource)
		default:
			out = g.fill(n, g.goSource, g.goSource, g.goSource, g.shellOutput, g.shellOutput, g.shellOutput, g.toolJSON, g.toolJSON, g.prose, g.prose)
		}
		g.pools[key] = append(pool, out)
		return out
	}
	return pool[g.rng.IntN(len(pool))]
}

// fill concatenates chunks drawn from the generators until n bytes.
func (g *turns) fill(n int, gens ...func(*strings.Builder)) string {
	var b strings.Builder
	for b.Len() < n {
		gens[g.rng.IntN(len(gens))](&b)
	}
	return b.String()
}

func text(s string) map[string]any { return map[string]any{"text": s} }

func (g *turns) user(turn int, pid, prompt string) {
	g.w.write(fmt.Sprintf("u-%06d", turn), record{Type: "user", Provenance: "real_user",
		Message:  &message{Role: "user", Parts: []any{text(prompt)}},
		PromptID: fmt.Sprintf("%.8s########%d", g.w.sid, turn), DaemonPromptID: pid})
}

func (g *turns) call(uuid, call, name string, args map[string]any, thought string) {
	parts := []any{}
	if thought != "" {
		parts = append(parts, map[string]any{"text": thought, "thought": true})
	}
	parts = append(parts, map[string]any{"functionCall": map[string]any{"id": call, "name": name, "args": args}})
	g.w.write(uuid, record{Type: "assistant", Provenance: "assistant_output", Model: "qwen3-coder-plus",
		Message:       &message{Role: "model", Parts: parts},
		UsageMetadata: map[string]int{"promptTokenCount": 4812, "candidatesTokenCount": 61, "totalTokenCount": 4873}})
}

func (g *turns) result(uuid, call, name, output string) {
	if g.outs != nil {
		last := len(*g.outs) - 1
		(*g.outs)[last] = append((*g.outs)[last], output)
	}
	g.w.write(uuid, record{Type: "tool_result", Provenance: "tool_result",
		Message: &message{Role: "user", Parts: []any{map[string]any{"functionResponse": map[string]any{
			"id": call, "name": name, "response": map[string]any{"output": output}}}}}})
}

func (g *turns) reply(uuid, s string) {
	g.w.write(uuid, record{Type: "assistant", Provenance: "assistant_output", Model: "qwen3-coder-plus",
		Message: &message{Role: "model", Parts: []any{text(s)}}})
}

func (g *turns) turnResult(turn int, pid string) {
	g.w.write(fmt.Sprintf("t-%06d", turn), record{Type: "system", Provenance: "system", Subtype: "turn_result",
		SystemPayload: map[string]any{"promptId": pid, "state": "completed", "stopReason": "end_turn",
			"endedAt": "2026-01-01T00:00:00.000Z"}})
}

// toolTurn is the original benchmark's turn: a prompt, one shell call, its
// large output, a one-line answer.
func (g *turns) toolTurn(turn int, pid, output string) {
	g.user(turn, pid, "list the files under src and explain them")
	call := fmt.Sprintf("call-%06d", turn)
	g.call(fmt.Sprintf("a-%06d", turn), call, "run_shell_command", map[string]any{"command": "ls -la src"}, "")
	g.result(fmt.Sprintf("r-%06d", turn), call, "run_shell_command", output)
	g.reply(fmt.Sprintf("m-%06d", turn), "The directory holds the Go sources of the service.")
}

// smallTurn is six records of 200–900 bytes (about 600 on average), the
// shape of the bundled example sessions.
func (g *turns) smallTurn(turn int, pid string) {
	g.user(turn, pid, "Add a jitter option to Retry and run the package tests.")
	call := fmt.Sprintf("call_%06d", turn)
	g.call(fmt.Sprintf("a-%06d", turn), call, "read_file",
		map[string]any{"absolute_path": g.w.cwd + "/pkg/net/retry.go"}, "I should read the file before answering.")
	g.result(fmt.Sprintf("r-%06d", turn), call, "read_file", g.sized("dense", 300+g.rng.IntN(420)))
	g.reply(fmt.Sprintf("m-%06d", turn), "Added WithJitter: each wait is now delay plus or minus a fraction of it.")
	if turn%3 == 0 {
		g.w.write(fmt.Sprintf("n-%06d", turn), record{Type: "user", Provenance: "system", Subtype: "notification",
			Message: &message{Role: "user", Parts: []any{text(`<task-notification><task-id>shell-3</task-id><status>completed</status><summary>Background command "go vet ./..." completed.</summary></task-notification>`)}},
			SystemPayload: map[string]any{"displayText": `Background command "go vet ./..." completed.`,
				"backgroundTask": map[string]any{"taskId": "shell-3", "status": "completed", "kind": "shell"}}})
	}
	g.turnResult(turn, pid)
}

// mixedTurn has one to four tool calls with outputs of 200 B to 256 KiB
// (log-uniform) of every content kind.
func (g *turns) mixedTurn(turn int, pid string) {
	g.user(turn, pid, "Find why the retry test is flaky and fix it; show me the diff.")
	kinds := []string{"ls", "dense", "code"}
	for k := range 1 + g.rng.IntN(4) {
		call := fmt.Sprintf("call-%06d-%d", turn, k)
		g.call(fmt.Sprintf("a-%06d-%d", turn, k), call, "run_shell_command",
			map[string]any{"command": "grep -rn \"Retry\" pkg/ && go test -run TestRetry -count=20 ./pkg/net/"},
			"The failure depends on timing; look at how the test waits.")
		size := 200 << uint(g.rng.IntN(11)) // 200 B … 200 KiB
		size += g.rng.IntN(size)
		g.result(fmt.Sprintf("r-%06d-%d", turn, k), call, "run_shell_command", g.sized(kinds[g.rng.IntN(len(kinds))], size))
	}
	g.reply(fmt.Sprintf("m-%06d", turn), "The test slept a fixed 10ms while the backoff had jitter; it now waits on the retry channel.")
	if turn%5 == 0 {
		g.w.write(fmt.Sprintf("n-%06d", turn), record{Type: "user", Provenance: "system", Subtype: "notification",
			Message: &message{Role: "user", Parts: []any{text(`<task-notification><task-id>shell-7</task-id><status>completed</status></task-notification>`)}}})
	}
	g.turnResult(turn, pid)
}

// goSource writes a Go function as a read_file or cat returns it: tab
// indentation, string literals with quotes and escapes.
func (g *turns) goSource(b *strings.Builder) {
	n := g.rng.IntN(1000)
	fmt.Fprintf(b, `// parseHeader%d reads one "key: value" line of a request.
func parseHeader%d(line string) (string, string, error) {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ':':
			if i == 0 {
				return "", "", fmt.Errorf("header %%q: empty name\n", line)
			}
			name, value := line[:i], line[i+1:]
			for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
				value = value[1:]
			}
			return name, value, nil
		case c < 0x20 || c == 0x7f:
			return "", "", errInvalid
		}
	}
	return "", "", fmt.Errorf("header %%q: no \":\" in %%d bytes", line, %d)
}

`, n, n, n)
}

// toolJSON writes JSON as a tool returns it (an API listing, pretty
// printed): a quote around every key and string.
func (g *turns) toolJSON(b *strings.Builder) {
	n := g.rng.IntN(10000)
	fmt.Fprintf(b, `{
	"number": %d,
	"title": "retry: \"WithJitter\" breaks TestRetry",
	"state": "open",
	"labels": ["bug", "flaky-test"],
	"body": "Steps:\r\n\t1. go test -count=20 ./pkg/net\r\n\t2. see \"timeout\"\r\n"
}
`, n)
}

// shellOutput writes build and test output: tabs between columns,
// backslash-continued recipe lines, Windows paths, a few quoted strings.
func (g *turns) shellOutput(b *strings.Builder) {
	n := g.rng.IntN(100)
	fmt.Fprintf(b, `=== RUN   TestRetry/jitter_%d
    retry_test.go:%d: got "timeout", want "ok"
--- FAIL: TestRetry/jitter_%d (0.01s)
pkg/net/retry.go:%d:	return fmt.Errorf("retry: %%w", err)
build:
	go build -trimpath \
		-ldflags "-s -w" \
		-o bin\demo.exe .\cmd\demo
	copy bin\demo.exe C:\Users\ci\dist\%d\
FAIL	github.com/acme/demo/pkg/net	0.%03ds
`, n, 40+n, n, 10+n, n, n*7)
}

// prose writes documentation as a README or a design note holds it: few
// escapes besides line ends.
func (g *turns) prose(b *strings.Builder) {
	fmt.Fprintf(b, `## Retry

Retry calls a function until it succeeds or the context ends. Each wait is the
previous one doubled, up to a maximum; WithJitter(%d) spreads the waits so that
many clients do not retry at once. The zero Policy retries three times.

`, g.rng.IntN(100))
}
