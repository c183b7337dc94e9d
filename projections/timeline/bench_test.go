package timeline_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tailproof/tailproof/projections/timeline"
)

// benchSession is a linear session of n turns: admission, prompt, tool call,
// tool result, answer, turn_result, terminal.
func benchSession(n int) (ledger, transcript []byte) {
	var l, tr bytes.Buffer
	parent := "null"
	ms := int64(1_700_000_000_000)
	rec := func(uuid, typ, prov, msg string) {
		ms += 7
		fmt.Fprintf(&tr, `{"uuid":"%s","parentUuid":%s,"sessionId":"s","timestamp":"2023-11-14T22:13:%02d.%03dZ","type":"%s","provenance":"%s","message":%s}`+"\n",
			uuid, parent, (ms/1000)%60, ms%1000, typ, prov, msg)
		parent = `"` + uuid + `"`
	}
	for i := range n {
		ms += 3
		fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","state":"in_flight","at":%d}`+"\n", i, ms)
		rec(fmt.Sprintf("u%d", i), "user", "real_user", `{"role":"user","parts":[{"text":"do the thing"}]}`)
		rec(fmt.Sprintf("a%d", i), "assistant", "assistant_output", fmt.Sprintf(`{"role":"model","parts":[{"functionCall":{"id":"c%d","name":"run_shell_command","args":{}}}]}`, i))
		rec(fmt.Sprintf("r%d", i), "tool_result", "tool_result", fmt.Sprintf(`{"role":"user","parts":[{"functionResponse":{"id":"c%d","name":"run_shell_command","response":{"output":"ok"}}}]}`, i))
		rec(fmt.Sprintf("f%d", i), "assistant", "assistant_output", `{"role":"model","parts":[{"text":"done"}]}`)
		ms += 3
		fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","terminal":"completed","stopReason":"end_turn","at":%d}`+"\n", i, ms)
	}
	return l.Bytes(), tr.Bytes()
}

// BenchmarkEvidenceAndTimeline decodes, merges and folds a 1,000-turn
// session (6,000 events).
func BenchmarkEvidenceAndTimeline(b *testing.B) {
	l, tr := benchSession(1000)
	b.SetBytes(int64(len(l) + len(tr)))
	b.ReportAllocs()
	for b.Loop() {
		ev, err := timeline.QwenEvidence(l, tr, 0)
		if err != nil {
			b.Fatal(err)
		}
		tl := timeline.New()
		for i := range ev.Len() {
			tl.Add(ev.Event(i))
		}
		if ev.Len() != 6000 {
			b.Fatal(ev.Len())
		}
	}
}
