package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchCodexSession writes a Codex rollout of about size bytes to dir:
// turns of a prompt, a tool call and its 600-byte output, a final answer
// and task_complete, each turn 1.8 KB. Generated, never committed.
func benchCodexSession(b *testing.B, dir string, size int) string {
	var buf bytes.Buffer
	ts := `"timestamp":"2026-11-30T09:00:00.000Z"`
	fmt.Fprintf(&buf, `{%s,"type":"session_meta","payload":{"id":"0199c0de-0000-7000-8000-000000000009","timestamp":"2026-11-30T09:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.169.0"}}`+"\n", ts)
	filler := string(bytes.Repeat([]byte("x"), 600))
	for t := 1; buf.Len() < size; t++ {
		fmt.Fprintf(&buf, `{%[1]s,"type":"turn_context","payload":{"turn_id":"t%[2]d","cwd":"/w","model":"gpt-5.1-codex"}}
{%[1]s,"type":"event_msg","payload":{"type":"task_started","turn_id":"t%[2]d"}}
{%[1]s,"type":"event_msg","payload":{"type":"user_message","message":"run the tests %[2]d","kind":"plain"}}
{%[1]s,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"go\",\"test\"]}","call_id":"c%[2]d"}}
{%[1]s,"type":"response_item","payload":{"type":"function_call_output","call_id":"c%[2]d","output":"%[3]s"}}
{%[1]s,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}],"phase":"final_answer"}}
{%[1]s,"type":"event_msg","payload":{"type":"task_complete","turn_id":"t%[2]d","last_agent_message":"ok"}}
`, ts, t, filler)
	}
	p := filepath.Join(dir, "rollout.jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkHarnessStatus is `tailproof status --harness codex --json` on a
// generated rollout (TAILPROOF_BENCH_BYTES, default 16 MiB), end to end:
// open, decode, map, fold, decide, print. MB/s is per CPU when run with
// -cpu 1.
func BenchmarkHarnessStatus(b *testing.B) {
	size := 16 << 20
	if s, err := strconv.Atoi(os.Getenv("TAILPROOF_BENCH_BYTES")); err == nil && s > 0 {
		size = s
	}
	p := benchCodexSession(b, b.TempDir(), size)
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if code := run(context.Background(), []string{"status", "--harness", "codex", "--file", p, "--writer-stopped", "--json"}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkHarnessReconcile is `tailproof reconcile --harness codex` on the
// same generated rollout: "stamp" is a first run (every turn stamped, the
// sidecar removed before each iteration), "settled" a second run that
// appends nothing. B/op and allocs/op are stable; peak RSS is measured
// with /usr/bin/time -v on the binary (ADR 0028, amendment 2026-12-01).
func BenchmarkHarnessReconcile(b *testing.B) {
	size := 16 << 20
	if s, err := strconv.Atoi(os.Getenv("TAILPROOF_BENCH_BYTES")); err == nil && s > 0 {
		size = s
	}
	p := benchCodexSession(b, b.TempDir(), size)
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"reconcile", "--harness", "codex", "--file", p, "--now", "1796029200000"}
	for _, settled := range []bool{false, true} {
		name := "stamp"
		if settled {
			name = "settled"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				if !settled {
					b.StopTimer()
					if err := os.Remove(p + ".tailproof-ledger"); err != nil && !os.IsNotExist(err) {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if code := run(context.Background(), args, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
