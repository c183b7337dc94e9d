package tailproof_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/claude"
)

// claudeTurns writes n Claude Code turns (prompt, tool round trip with an
// output of out bytes, answer, turn_duration): 2.1.328's shapes.
func claudeTurns(n, out int) []byte {
	var b bytes.Buffer
	parent := "null"
	payload := bytes.Repeat([]byte("x"), out)
	rec := func(uuid, body string) {
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,%s,"uuid":"%s","timestamp":"2026-11-30T10:00:00.000Z","sessionId":"s","version":"2.1.328"}`+"\n", parent, body, uuid)
		parent = `"` + uuid + `"`
	}
	for t := 0; t < n; t++ {
		p := fmt.Sprintf("p%d", t)
		rec("u"+p, `"type":"user","message":{"role":"user","content":"do step `+p+`"},"promptId":"`+p+`","origin":{"kind":"human"}`)
		rec("a"+p, `"type":"assistant","message":{"id":"m`+p+`","role":"assistant","content":[{"type":"tool_use","id":"t`+p+`","name":"Bash","input":{}}],"stop_reason":"tool_use"}`)
		rec("r"+p, `"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t`+p+`","content":"`+string(payload)+`"}]}`)
		rec("f"+p, `"type":"assistant","message":{"id":"n`+p+`","role":"assistant","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn"}`)
		rec("d"+p, `"type":"system","subtype":"turn_duration","durationMs":10,"messageCount":4`)
	}
	return b.Bytes()
}

// BenchmarkReconcileTurns is the first reconcile of a session (every turn
// stamped: one fsynced append each) and the second (nothing to stamp: the
// file decoded, the sidecar read), on the real filesystem in a temp dir and
// on the memory one, for many short turns and for fewer turns with large
// tool outputs.
func BenchmarkReconcileTurns(b *testing.B) {
	for _, shape := range []struct {
		name     string
		turns, n int
	}{{"200-short-turns", 200, 200}, {"20-turns-of-256KiB", 20, 256 << 10}} {
		data := claudeTurns(shape.turns, shape.n)
		for _, fsname := range []string{"os", "memory"} {
			b.Run(shape.name+"/"+fsname+"/first", func(b *testing.B) { benchReconcile(b, fsname, data, false) })
			b.Run(shape.name+"/"+fsname+"/again", func(b *testing.B) { benchReconcile(b, fsname, data, true) })
		}
	}
}

func benchReconcile(b *testing.B, fsname string, data []byte, again bool) {
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		var fsys vfs.FS
		var path string
		if fsname == "os" {
			path = filepath.Join(b.TempDir(), "s.jsonl")
			fsys = vfs.OS
			os.WriteFile(path, data, 0o600)
		} else {
			m := memory.NewFS()
			path = "/h/.claude/projects/-w/s.jsonl"
			m.WriteFile(path, data, 0o600)
			fsys = m
		}
		open := func(context.Context) (io.ReadCloser, error) { return fsys.OpenFile(path, os.O_RDONLY, 0) }
		side := harnessfs.NewSidecar(fsys, path)
		o := tailproof.TurnReconcileOptions{Harness: claude.Harness(), Now: 1}
		if again {
			if _, err := tailproof.ReconcileTurns(ctx, open, side, o); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		res, err := tailproof.ReconcileTurns(ctx, open, side, o)
		if err != nil || (again != (len(res.Appended) == 0)) {
			b.Fatalf("%v, %d appended", err, len(res.Appended))
		}
	}
}
