// Command gen writes a large, realistic Qwen Code session for benchmarks: a
// transcript of repeated tool-using turns whose tool outputs are large, and
// a ledger whose last prompt is left in_flight with its turn at the end of
// the transcript — the shape a daemon crash leaves behind.
//
//	go run ./simulations/bench/gen -dir DIR -mb 600
//
// It writes DIR/projects/<sanitized cwd>/chats/<id>.jsonl and <id>.ledger.jsonl
// in Qwen Code's runtime layout (cwd /bench/workspace), so both tailproof and
// the reference read the same files.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	SessionID = "b0000000-0000-4000-8000-000000000600"
	Cwd       = "/bench/workspace"
	base      = int64(1767225600000)
)

func main() {
	dir := flag.String("dir", "", "runtime directory to write into")
	mb := flag.Int("mb", 600, "approximate transcript size in MB")
	output := flag.Int("output-kb", 64, "size of each tool output in KiB")
	flag.Parse()
	if *dir == "" {
		log.Fatal("gen: -dir is required")
	}
	chats := filepath.Join(*dir, "projects", strings.NewReplacer("/", "-").Replace(Cwd), "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		log.Fatal(err)
	}
	tf, err := os.Create(filepath.Join(chats, SessionID+".jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	lf, err := os.Create(filepath.Join(chats, SessionID+".ledger.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriterSize(tf, 1<<20)
	lw := bufio.NewWriter(lf)
	blob := strings.Repeat("drwxr-xr-x  2 user user 4096 Jan  1 00:00 some/long/path/name.go\n", *output*1024/64)
	var (
		written int64
		n       int
		parent  any
		ts      = base
	)
	write := func(uuid, typ, prov string, msg map[string]any, extra map[string]any) {
		rec := map[string]any{"uuid": uuid, "parentUuid": parent, "sessionId": SessionID,
			"timestamp": time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z"),
			"type":      typ, "provenance": prov, "cwd": Cwd, "version": "0.24.4", "message": msg}
		for k, v := range extra {
			rec[k] = v
		}
		b, err := json.Marshal(rec)
		if err != nil {
			log.Fatal(err)
		}
		w.Write(b)
		w.WriteByte('\n')
		written += int64(len(b) + 1)
		parent = uuid
		ts += 250
	}
	target := int64(*mb) << 20
	for turn := 0; ; turn++ {
		last := written >= target
		pid := fmt.Sprintf("prompt-%06d", turn)
		at := ts
		if parent == nil {
			fmt.Fprintf(lw, `{"v":1,"promptId":%q,"state":"in_flight","at":%d}`+"\n", pid, at)
		} else {
			fmt.Fprintf(lw, `{"v":1,"promptId":%q,"state":"in_flight","tailUuid":%q,"at":%d}`+"\n", pid, parent, at)
		}
		ts++
		n++
		write(fmt.Sprintf("u-%06d", turn), "user", "real_user",
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "list the files under src and explain them"}}},
			map[string]any{"daemonPromptId": pid})
		call := fmt.Sprintf("call-%06d", turn)
		write(fmt.Sprintf("a-%06d", turn), "assistant", "assistant_output",
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"id": call, "name": "run_shell_command", "args": map[string]any{"command": "ls -la src"}}}}}, nil)
		write(fmt.Sprintf("r-%06d", turn), "tool_result", "tool_result",
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": call, "name": "run_shell_command", "response": map[string]any{"output": blob}}}}}, nil)
		write(fmt.Sprintf("m-%06d", turn), "assistant", "assistant_output",
			map[string]any{"role": "model", "parts": []any{map[string]any{"text": "The directory holds the Go sources of the service."}}}, nil)
		if last {
			break // the last prompt stays in_flight: its turn completed, its terminal was lost
		}
		fmt.Fprintf(lw, `{"v":1,"promptId":%q,"terminal":"completed","stopReason":"end_turn","at":%d}`+"\n", pid, ts)
		ts++
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	lw.Flush()
	tf.Close()
	lf.Close()
	fmt.Printf("%s: %d turns, %d MB transcript\n", chats, n, written>>20)
}
