// Command dshgen writes a large dsh session log for benchmarks of `replay
// --dsh` and `dsh recover`: tool-using turns of text deltas, the last turn
// left open with a tool call recorded and no result (the shape a crash
// leaves), in one of three formats.
//
//	go run ./simulations/bench/dshgen -dir DIR -mb 200 [-format v1|v0-raw|v0-zstd] [-deltas N] [-output-kb K]
//
// v1 writes DIR/<id>.jsonl; v0 writes the published layout
// DIR/<project>/<id>/session.jsonl (v0-raw) or session.jsonl.zstd (one
// checksummed frame per append batch, as dsh-session-persistence-jsonl
// 0.1.0-rc.8 writes them). Its last line gives the path, turns, events and
// size. Nothing it writes is committed: run it again.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

const (
	sessionID       = "bench-dsh-0001"
	cwd             = "/bench/workspace"
	t0        int64 = 1781000000000
)

func main() {
	dir := flag.String("dir", "", "directory to write into")
	mb := flag.Int("mb", 200, "approximate plaintext size in MB")
	format := flag.String("format", "v1", "v1, v0-raw or v0-zstd")
	deltas := flag.Int("deltas", 40, "text deltas (assistant/chunk events) a turn")
	outputKB := flag.Int("output-kb", 2, "size of each tool output in KiB")
	flag.Parse()
	if *dir == "" {
		log.Fatal("dshgen: -dir is required")
	}
	v0 := *format != "v1"
	if *format != "v1" && *format != "v0-raw" && *format != "v0-zstd" {
		log.Fatalf("dshgen: -format %q: want v1, v0-raw or v0-zstd", *format)
	}
	path := filepath.Join(*dir, sessionID+".jsonl")
	if v0 {
		// The published layout: <root>/<cwd with / as -, framed by -->/<id>/.
		project := "--" + strings.ReplaceAll(strings.TrimPrefix(cwd, "/"), "/", "-") + "--"
		path = filepath.Join(*dir, project, sessionID, "session.jsonl")
		if *format == "v0-zstd" {
			path += ".zstd"
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	w := &out{bw: bufio.NewWriterSize(f, 1<<20), zstd: *format == "v0-zstd"}
	if w.zstd {
		if w.enc, err = zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1)); err != nil {
			log.Fatal(err)
		}
	}
	if v0 {
		w.line(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":%q,"delegationDepth":0}`, sessionID, t0, cwd)
	} else {
		w.line(`{"type":"session","version":1,"id":%q,"createdAt":%d,"cwd":%q}`, sessionID, t0, cwd)
	}
	w.flush()
	output := strings.Repeat("drwxr-xr-x  2 me me 4096 Dec  1 09:00 some-directory-name\\n", max(1, *outputKB*1024/58))
	limit := int64(*mb) << 20
	seq, turn := 0, 0
	ev := func(typ, data string, extra ...string) {
		w.line(`{"type":%q,"seq":%d,"time":%d,"data":%s%s}`, typ, seq, t0+int64(seq), data, strings.Join(extra, ""))
		seq++
	}
	for turn = 1; ; turn++ {
		last := w.plain >= limit
		call := fmt.Sprintf("call_%d", turn)
		if v0 {
			ev("turn/start", fmt.Sprintf(`{"turn":%d}`, turn))
			ev("user/message", `{"id":"u`+fmt.Sprint(turn)+`","role":"user","content":[{"type":"text","text":"list the files"}],"source":{"kind":"user"}}`, `,"surfaceOp":"append"`)
		} else {
			ev("turn/start", fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}`, turn))
			ev("user/message", `{"content":[{"type":"text","text":"list the files"}],"source":{"kind":"user"}}`)
		}
		ev("step/start", fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
		w.flush()
		for i := range *deltas {
			ev("assistant/chunk", fmt.Sprintf(`{"turn":%d,"step":1,"chunk":{"type":"text-delta","index":0,"text":"token %d "}}`, turn, i))
		}
		args := `"arguments":"{\"command\":\"ls -l\"}"`
		if v0 {
			ev("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":"a%d","role":"assistant","content":[{"type":"tool-call","id":%q,"name":"bash",%s}],"source":{"kind":"model","provider":"p","model":"m"}}}`, turn, turn, call, args), `,"surfaceOp":"append"`)
		} else {
			ev("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"content":[{"type":"tool-call","id":%q,"name":"bash",%s}]}`, turn, call, args))
		}
		ev("tool/call", fmt.Sprintf(`{"turn":%d,"step":1,"callId":%q,"name":"bash",%s}`, turn, call, args))
		w.flush()
		if last {
			break // crashed while the tool ran: no result, the turn open
		}
		if v0 {
			ev("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":"r%d","role":"user","content":[{"type":"tool-result","toolCallId":%q,"content":[{"type":"text","text":"%s"}]}],"source":{"kind":"tool","callId":%q}}}`, turn, turn, call, output, call), `,"surfaceOp":"append"`, fmt.Sprintf(`,"sourceEventSeqs":[%d]`, seq-1))
		} else {
			ev("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"callId":%q,"content":[{"type":"text","text":"%s"}],"isError":false}`, turn, call, output))
		}
		ev("step/end", fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
		ev("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))
		w.flush()
	}
	w.flush()
	if err := w.bw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d turns (the last open), %d events, %d bytes plaintext, %d on disk\n", path, turn, seq, w.plain, info.Size())
}

// out writes lines, raw or one zstd frame per batch (flush).
type out struct {
	bw    *bufio.Writer
	zstd  bool
	enc   *zstd.Encoder
	batch []byte
	plain int64
}

func (o *out) line(format string, args ...any) {
	o.batch = fmt.Appendf(o.batch, format, args...)
	o.batch = append(o.batch, '\n')
}

func (o *out) flush() {
	if len(o.batch) == 0 {
		return
	}
	o.plain += int64(len(o.batch))
	b := o.batch
	if o.zstd {
		b = o.enc.EncodeAll(o.batch, nil)
	}
	if _, err := o.bw.Write(b); err != nil {
		log.Fatal(err)
	}
	o.batch = o.batch[:0]
}
