package apihistory_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
)

// longSession is n records of a tool-heavy session: a prompt, then rounds of
// call → result → answer, with a cold notification now and then.
func longSession(n int) []events.Event {
	evs := make([]events.Event, 0, n)
	add := func(r *qwen.Record) {
		r.UUID = "r" + strconv.Itoa(len(evs))
		evs = append(evs, qwen.Envelope(r, events.Position{Line: len(evs) + 1}))
	}
	for i := 0; len(evs) < n; i++ {
		id := "call-" + strconv.Itoa(i)
		switch i % 8 {
		case 0:
			add(&qwen.Record{Type: qwen.TypeUser, Provenance: "real_user", PromptID: "p" + strconv.Itoa(i), DaemonPromptID: "d" + strconv.Itoa(i),
				Message: &qwen.Content{Role: "user", Parts: []qwen.Part{{Kind: qwen.PartText, Text: "do the next thing", OnlyText: true}}}})
		case 7:
			add(&qwen.Record{Type: qwen.TypeUser, Subtype: qwen.SubtypeNotification, HasSubtype: true, Provenance: "system",
				Message: &qwen.Content{Role: "user", Parts: []qwen.Part{{Kind: qwen.PartText, Text: histtest.Envelope("bg"), OnlyText: true}}}})
		default:
			add(&qwen.Record{Type: qwen.TypeAssistant, Provenance: "assistant_output",
				Message: &qwen.Content{Role: "model", Parts: []qwen.Part{{Kind: qwen.PartText, Text: "reading", Thought: true}, {Kind: qwen.PartFunctionCall, ID: id, HasID: true, Name: "read_file", HasName: true}}}})
			add(&qwen.Record{Type: qwen.TypeToolResult, Provenance: "tool_result",
				Message: &qwen.Content{Role: "user", Parts: []qwen.Part{{Kind: qwen.PartFunctionResponse, ID: id, HasID: true, Name: "read_file", HasName: true}}}})
		}
	}
	return evs[:n]
}

func BenchmarkFold(b *testing.B) {
	const n = 100_000
	evs := longSession(n)
	for _, bc := range []struct {
		name string
		opts apihistory.Options
	}{
		{"bounded", apihistory.Options{}},
		{"bounded-fingerprints", apihistory.Options{Fingerprints: true}},
		{"bounded-strip", apihistory.Options{StripThoughts: true}},
		{"unbounded", apihistory.Options{Unbounded: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f := apihistory.New(bc.opts)
				for _, ev := range evs {
					if err := f.Add(ev); err != nil {
						b.Fatal(err)
					}
				}
				_ = f.Result()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
			b.ReportMetric(liveBytes(b, evs, bc.opts), "live-B")
		})
	}
}

// liveBytes is the heap a fold of evs retains (the records themselves
// excluded): what the whole-history id counts cost.
func liveBytes(b *testing.B, evs []events.Event, opts apihistory.Options) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := apihistory.New(opts)
	for _, ev := range evs {
		if err := f.Add(ev); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(f)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}
