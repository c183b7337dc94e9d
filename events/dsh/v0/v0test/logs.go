// Package v0test builds dsh v0 logs for tests and benchmarks of the v0
// reader and its adapters: the benchmark shapes of ADR 0037 (chunks, packed,
// tools), one Zstandard frame per append batch as
// dsh-session-persistence-jsonl 0.1.0-rc.8 writes them.
package v0test

import (
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Header is the header line of every log built here.
const Header = `{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/w","delegationDepth":0}`

// Log is Frames compressed (Compress) with the plaintext size.
func Log(shape string, turns int) (compressed []byte, plain int) {
	frames := Frames(shape, turns)
	for _, f := range frames {
		plain += len(f)
	}
	return Compress(frames), plain
}

// encoder is shared: EncodeAll is safe for concurrent use, and a new
// encoder per call allocates and clears its match tables (megabytes), which
// made each execution of a fuzzer that compresses its input slow enough
// that minimizing one new input took the whole fuzzing time.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	return w
})

// Compress encodes each plaintext as one checksummed Zstandard frame, as
// the backend does, and concatenates them.
func Compress(frames [][]byte) []byte {
	w := encoder()
	var out []byte
	for _, f := range frames {
		out = w.EncodeAll(f, out)
	}
	return out
}

// epochMillis is the first frame's time; typed so the sums fit a 32-bit int
// platform's int too.
const epochMillis int64 = 1781000000000

// Frames builds the plaintext frames of a v0 log of turns in the benchmark
// shapes, header frame first, one frame per checkpoint batch as the backend
// writes them. shape "chunks" is an
// unpacked log (one assistant/chunk per line, packChunks: false), "packed"
// the same stream packed into rows, "tools" few chunks and large tool results.
func Frames(shape string, turns int) [][]byte {
	deltas, resultLines := 200, 0
	if shape == "tools" {
		deltas, resultLines = 5, 150
	}
	return Sized(shape, turns, deltas, resultLines)
}

// Sized is Frames with deltas chunks per turn and, when resultLines > 0, a
// tool result of that many 56-byte directory lines (else a two-line one):
// small logs of the same shapes, for fuzz seeds.
func Sized(shape string, turns, deltas, resultLines int) [][]byte {
	var frames [][]byte
	frames = append(frames, []byte(Header+"\n"))
	seq := 0
	line := func(sb *strings.Builder, format string, args ...any) {
		fmt.Fprintf(sb, format, args...)
		sb.WriteByte('\n')
	}
	flush := func(sb *strings.Builder) {
		frames = append(frames, []byte(sb.String()))
		sb.Reset()
	}
	var sb strings.Builder
	for turn := 1; turn <= turns; turn++ {
		line(&sb, `{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":%d}}`, seq, epochMillis+int64(seq), turn)
		seq++
		line(&sb, `{"type":"step/start","seq":%d,"time":%d,"data":{"turn":%d,"step":1}}`, seq, epochMillis+int64(seq), turn)
		seq++
		flush(&sb)
		if shape == "packed" {
			var texts, dts []string
			for i := 0; i < deltas; i++ {
				texts = append(texts, fmt.Sprintf(`"tok%d "`, i))
				if i > 0 {
					dts = append(dts, "3")
				}
			}
			line(&sb, `{"type":"text-chunks","seq0":%d,"time0":%d,"data":{"turn":%d,"step":1,"index":0,"dt":[%s],"texts":[%s]}}`, seq, epochMillis+int64(seq), turn, strings.Join(dts, ","), strings.Join(texts, ","))
			seq += deltas
		} else {
			for i := 0; i < deltas; i++ {
				line(&sb, `{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":%d,"step":1,"chunk":{"type":"text-delta","index":0,"text":"tok%d "}}}`, seq, epochMillis+int64(seq), turn, i)
				seq++
			}
		}
		line(&sb, `{"type":"assistant/message","seq":%d,"time":%d,"data":{"turn":%d,"step":1,"message":{"id":"a%d","role":"assistant","content":[{"type":"tool-call","id":"c%d","name":"bash","arguments":"{\"command\":\"ls\"}"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}`, seq, epochMillis+int64(seq), turn, turn, turn)
		seq++
		line(&sb, `{"type":"tool/call","seq":%d,"time":%d,"data":{"turn":%d,"step":1,"callId":"c%d","name":"bash","arguments":"{\"command\":\"ls\"}"}}`, seq, epochMillis+int64(seq), turn, turn)
		seq++
		flush(&sb)
		result := "README.md\\nsrc\\n"
		if resultLines > 0 {
			result = strings.Repeat("drwxr-xr-x  2 me me 4096 Dec  1 09:00 some-directory-name\\n", resultLines)
		}
		line(&sb, `{"type":"tool/result","seq":%d,"time":%d,"data":{"turn":%d,"step":1,"message":{"id":"r%d","role":"user","content":[{"type":"tool-result","toolCallId":"c%d","content":[{"type":"text","text":"%s"}]}],"source":{"kind":"tool","callId":"c%d"}}},"surfaceOp":"append","sourceEventSeqs":[%d]}`, seq, epochMillis+int64(seq), turn, turn, turn, result, turn, seq-1)
		seq++
		line(&sb, `{"type":"step/end","seq":%d,"time":%d,"data":{"turn":%d,"step":1}}`, seq, epochMillis+int64(seq), turn)
		seq++
		line(&sb, `{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":%d,"reason":{"kind":"completed"}}}`, seq, epochMillis+int64(seq), turn)
		seq++
		flush(&sb)
	}
	return frames
}
