package qwen

import (
	"bytes"
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/tailproof/tailproof/events"
)

// smallTranscript is a session of n records shaped like the bundled example
// sessions and the simulator's lines: 200–700 bytes each, short texts,
// function calls and responses, a notification whose text holds escapes and a
// turn_result per turn. Reconciling small sessions costs per record, not per
// byte, so this is the workload where decoding overhead shows.
func smallTranscript(n int) []byte {
	const sid = `"b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d"`
	var b []byte
	id := func(i int) string {
		return `"` + "9b2f6a1c-3e8d-4c7b-a1f5-" + strconv.FormatInt(100000000000+int64(i), 10) + `"`
	}
	parent := "null"
	for i := 0; i < n; i++ {
		ts := `"2026-11-29T14:` + strconv.Itoa(10+i/60%50) + `:` + strconv.Itoa(10+i%50) + `.482Z"`
		b = append(b, `{"uuid":`+id(i)+`,"parentUuid":`+parent+`,"sessionId":`+sid+`,"timestamp":`+ts...)
		call := `"call_` + strconv.Itoa(i/6) + `"`
		switch i % 6 {
		case 0:
			b = append(b, `,"type":"user","provenance":"real_user","cwd":"/work/demo","version":"0.24.4","gitBranch":"main","message":{"role":"user","parts":[{"text":"Add a jitter option to Retry and run the package tests."}]},"promptId":"b7e2c4d1########`+strconv.Itoa(i)+`","daemonPromptId":"5c9e2b7a-1d3f-4a8c-b6e4-9f0a2c7d1e58"}`...)
		case 1:
			b = append(b, `,"type":"assistant","provenance":"assistant_output","cwd":"/work/demo","version":"0.24.4","gitBranch":"main","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"I should read the file before answering.","thought":true},{"functionCall":{"id":`+call+`,"name":"read_file","args":{"absolute_path":"/work/demo/pkg/net/retry.go"}}}]},"usageMetadata":{"promptTokenCount":4812,"candidatesTokenCount":61,"totalTokenCount":4891}}`...)
		case 2:
			b = append(b, `,"type":"tool_result","provenance":"tool_result","cwd":"/work/demo","version":"0.24.4","gitBranch":"main","message":{"role":"user","parts":[{"functionResponse":{"id":`+call+`,"name":"read_file","response":{"output":"ok  \tgithub.com/acme/demo/pkg/net\t0.412s\n"}}}]},"toolCallResult":{"callId":`+call+`,"status":"success","resultDisplay":"ok"}}`...)
		case 3:
			b = append(b, `,"type":"assistant","provenance":"assistant_output","cwd":"/work/demo","version":"0.24.4","gitBranch":"main","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"Added WithJitter: each wait is now delay plus or minus a fraction of it. The package tests pass."}]},"usageMetadata":{"promptTokenCount":5902,"candidatesTokenCount":58,"totalTokenCount":5960}}`...)
		case 4:
			b = append(b, `,"type":"user","provenance":"system","cwd":"/work/demo","version":"0.24.4","subtype":"notification","message":{"role":"user","parts":[{"text":"<task-notification><task-id>shell-3</task-id><status>completed</status><summary>Background command \"go vet ./...\" completed.</summary></task-notification>"}]},"systemPayload":{"displayText":"Background command \"go vet ./...\" completed.","backgroundTask":{"taskId":"shell-3","status":"completed","kind":"shell"}}}`...)
		case 5:
			b = append(b, `,"type":"system","provenance":"system","cwd":"/work/demo","version":"0.24.4","subtype":"turn_result","systemPayload":{"promptId":"5c9e2b7a-1d3f-4a8c-b6e4-9f0a2c7d1e58","state":"completed","stopReason":"end_turn","endedAt":"2026-11-29T14:02:19.019Z"}}`...)
		}
		b = append(b, '\n')
		parent = id(i)
	}
	return b
}

// BenchmarkSmallRecords reports the per-record cost of decoding small
// records: "decode" is the codec alone (line framing included), "scan" the
// one pass of Scan and "chain" both passes of LoadChain and Walk over an
// in-memory source, as a decision runs them.
func BenchmarkSmallRecords(b *testing.B) {
	const n = 600
	data := smallTranscript(n)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	perRecord := func(b *testing.B, run func()) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu := cpuSeconds()
		for b.Loop() {
			run()
		}
		used := cpuSeconds() - cpu
		runtime.ReadMemStats(&after)
		recs := float64(b.N) * n
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/recs, "ns/record")
		// CPU time (GC included) per record does not depend on how busy a
		// shared machine is, as wall-clock time does.
		b.ReportMetric(used*1e9/recs, "cpu-ns/record")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/recs, "allocs/record")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/recs, "B/record")
	}
	b.Run("decode", func(b *testing.B) {
		var evs []events.Event
		perRecord(b, func() { evs = decodeAll(b, data, evs, n) })
	})
	b.Run("scan", func(b *testing.B) {
		perRecord(b, func() {
			got := 0
			c, err := Scan(open, LoadOptions{}, func(int, events.Event) error { got++; return nil }, func() { got = 0 })
			if err != nil {
				b.Fatal(err)
			}
			if got != n || !c.Streaming || c.Degraded() != "" {
				b.Fatalf("scanned %d of %d records, streaming=%v, degraded=%q", got, n, c.Streaming, c.Degraded())
			}
		})
	})
	b.Run("chain", func(b *testing.B) {
		perRecord(b, func() {
			c, err := LoadChain(open, LoadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			if err := c.Walk(open, func(int, events.Event) error { got++; return nil }); err != nil {
				b.Fatal(err)
			}
			if got != n || !c.Streaming || c.Degraded() != "" {
				b.Fatalf("walked %d of %d records, streaming=%v, degraded=%q", got, n, c.Streaming, c.Degraded())
			}
		})
	})
}
