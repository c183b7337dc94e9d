package jsonl_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/dsh"
)

// dshBenchLog is a long session: 2,000 turns of chunks, a tool call with a
// 2 KiB result, and the closing messages — about 8 MB.
func dshBenchLog() []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"bench","createdAt":1}` + "\n")
	seq := int64(0)
	add := func(p dsh.Payload) {
		b.Write(dsh.AppendRecord(nil, dsh.NewRecord(seq, 1000+seq, p)))
		b.WriteByte('\n')
		seq++
	}
	out := strings.Repeat("x", 2048)
	for turn := int64(1); turn <= 2000; turn++ {
		add(&dsh.TurnStart{Turn: turn, Trigger: dsh.Trigger{Kind: "message", Source: &dsh.Source{Kind: "user"}}})
		add(&dsh.UserMessage{Content: []dsh.Block{{Type: "text", Text: "do the thing"}}, Source: dsh.Source{Kind: "user"}})
		add(&dsh.StepStart{Turn: turn, Step: 1})
		for i := int64(0); i < 8; i++ {
			add(&dsh.AssistantChunk{Turn: turn, Step: 1, Chunk: dsh.Chunk{Type: "text-delta", Index: 0, Text: "some words "}})
		}
		add(&dsh.AssistantMessage{Turn: turn, Step: 1, Content: []dsh.Block{{Type: "tool-call", ID: "c", Name: "bash", Arguments: "{}"}}})
		add(&dsh.ToolCall{Turn: turn, Step: 1, CallID: "c", Name: "bash", Arguments: "{}"})
		add(&dsh.ToolResult{Turn: turn, Step: 1, CallID: "c", Content: []dsh.Block{{Type: "text", Text: out}}})
		add(&dsh.StepEnd{Turn: turn, Step: 1})
		add(&dsh.TurnEnd{Turn: turn, Reason: dsh.Reason{Kind: "completed"}})
	}
	return b.Bytes()
}

// BenchmarkDSHRecover measures load's scan and fold over a clean log
// (no repair), from the memory FS and from the OS page cache.
func BenchmarkDSHRecover(b *testing.B) {
	data := dshBenchLog()
	b.Run("memory", func(b *testing.B) {
		m := memory.NewFS()
		m.MkdirAll("/r", 0o700)
		m.WriteFile("/r/bench.jsonl", data, 0o600)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonl.RecoverDSHLog(m, "/r/bench.jsonl"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os", func(b *testing.B) {
		path := b.TempDir() + "/bench.jsonl"
		if err := writeFileOS(path, data); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonl.RecoverDSHLog(vfs.OS, path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDSHAppend is one turn-sized batch (6 events) appended and fsynced
// per op, on the OS filesystem under the test's temp dir.
func BenchmarkDSHAppend(b *testing.B) {
	l := jsonl.NewDSHLog(vfs.OS, b.TempDir(), jsonl.DSHOptions{})
	cwd := "/w"
	meta := dshBenchMeta(&cwd)
	if err := l.Create(dshBG, meta); err != nil {
		b.Fatal(err)
	}
	seq := int64(0)
	for b.Loop() {
		batch := []dsh.Record{
			dsh.NewRecord(seq, 1, &dsh.TurnStart{Turn: seq, Trigger: dsh.Trigger{Kind: "continuation"}}),
			dsh.NewRecord(seq+1, 1, &dsh.TurnEnd{Turn: seq, Reason: dsh.Reason{Kind: "completed"}}),
		}
		if err := l.Append(dshBG, "bench", batch); err != nil {
			b.Fatal(err)
		}
		seq += 2
	}
}

func writeFileOS(path string, data []byte) error {
	f, err := vfs.OS.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func dshBenchMeta(cwd *string) adapters.SessionMeta {
	return adapters.SessionMeta{Header: dsh.Header{Version: 1, ID: "bench", CreatedAt: 1, Cwd: cwd}}
}
