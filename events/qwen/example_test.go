package qwen_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// Two passes over a transcript: LoadChain indexes it, Walk emits the active
// chain. The rewound-away user record is not on it, and the torn final line
// is reported without degrading the chain.
func ExampleLoadChain() {
	transcript := `{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"list files"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"ls","args":{}}}]}}
{"uuid":"x1","parentUuid":"a1","sessionId":"S","type":"user","message":{"role":"user","parts":[{"text":"rewound away"}]}}
{"uuid":"t1","parentUuid":"a1","sessionId":"S","timestamp":"2026-01-01T00:00:03.000Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"a.go"}}}]}}
{"uuid":"a2","parentUuid":"t1","sessionId":"S","ty`
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(transcript)), nil }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = chain.Walk(open, func(i int, ev events.Event) error {
		fmt.Println(i, ev.Describe())
		return nil
	})
	fmt.Println("bad lines:", len(chain.BadLines), "degraded:", chain.Degraded() != "")
	// Output:
	// 0 transcript:1 qwen.user uuid=u1 t=1767225601000 prov=real_user user user["list files"]
	// 1 transcript:2 qwen.assistant uuid=a1 parent=u1 t=1767225602000 assistant model[fc(c1 ls)]
	// 2 transcript:4 qwen.tool_result uuid=t1 parent=a1 t=1767225603000 tool_result user[fr(c1 ls)]
	// bad lines: 1 degraded: false
}

// One pass over a linear transcript: Scan hands each record to the visitor
// as it indexes it. The same file with a rewind at its end streams until the
// rewind, then restarts and walks the chain the rewind selected.
func ExampleScan() {
	linear := `{"uuid":"u1","parentUuid":null,"sessionId":"S","type":"user","message":{"role":"user","parts":[{"text":"list files"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"S","type":"assistant","message":{"role":"model","parts":[{"text":"a.go b.go"}]}}
`
	for _, transcript := range []string{linear, linear + `{"uuid":"u2","parentUuid":"u1","sessionId":"S","type":"assistant","message":{"role":"model","parts":[{"text":"only a.go"}]}}
`} {
		opens := 0
		open := func() (io.ReadCloser, error) { opens++; return io.NopCloser(strings.NewReader(transcript)), nil }
		var seen []string
		chain, err := qwen.Scan(open, qwen.LoadOptions{}, func(i int, ev events.Event) error {
			seen = append(seen, ev.UUID)
			return nil
		}, func() { seen = seen[:0] })
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(seen, "leaf", chain.LeafUUID, "passes", opens)
	}
	// Output:
	// [u1 a1] leaf a1 passes 1
	// [u1 u2] leaf u2 passes 2
}

// Two records glued on one line (Qwen #3606) both decode, each at its own
// byte offset; a JSON object Qwen's validator would skip is an error, not an
// event.
func ExampleCodec() {
	in := `{"uuid":"u1","parentUuid":null,"sessionId":"S","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}{"uuid":"a1","parentUuid":"u1","sessionId":"S","type":"assistant"}
{"uuid":"x","sessionId":"S","type":"user"}
`
	for ev, err := range events.Decode(strings.NewReader(in), qwen.Codec{}, events.Options{}) {
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(ev.Pos, ev.Describe())
	}
	// Output:
	// line 1, offset 0 transcript:1 qwen.user uuid=u1 user user["hi"]
	// line 1, offset 111 transcript:1 qwen.assistant uuid=a1 parent=u1 assistant
	// error: events: transcript line 2, offset 178: torn tail: qwen: byte 0: invalid chat record: Skipped a transcript record with invalid identity fields.
}
