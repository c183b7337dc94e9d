package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tailproof/tailproof/events"
)

func benchReplaySession(b *testing.B, turns int) *session {
	var l, tr bytes.Buffer
	parent := "null"
	ms := int64(1_700_000_000_000)
	rec := func(uuid, typ, prov, msg string) {
		ms += 7
		fmt.Fprintf(&tr, `{"uuid":"%s","parentUuid":%s,"sessionId":"s","timestamp":"2023-11-14T22:13:%02d.%03dZ","type":"%s","provenance":"%s","message":%s}`+"\n",
			uuid, parent, (ms/1000)%60, ms%1000, typ, prov, msg)
		parent = `"` + uuid + `"`
	}
	for i := range turns {
		ms += 3
		fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","state":"in_flight","at":%d}`+"\n", i, ms)
		rec(fmt.Sprintf("u%d", i), "user", "real_user", `{"role":"user","parts":[{"text":"do the thing"}]}`)
		rec(fmt.Sprintf("a%d", i), "assistant", "assistant_output", `{"role":"model","parts":[{"text":"done"}]}`)
		if i < turns-1 {
			ms += 3
			fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","terminal":"completed","at":%d}`+"\n", i, ms)
		}
	}
	s, err := newQwenSession("bench", [2][]byte{l.Bytes(), tr.Bytes()}, [2]bool{true, true})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkReplaySteps steps every event of a session. The api history is
// folded once over a linear chain; the attribution fold is forked at each
// admission from the target-free fold of the chain so far (ADR 0035).
func BenchmarkReplaySteps(b *testing.B) {
	for _, turns := range []int{25, 100} {
		s := benchReplaySession(b, turns)
		b.Run(fmt.Sprintf("events=%d", s.ev.Len()), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st := newStepper(s)
				for range s.ev.Len() {
					st.next()
				}
			}
		})
	}
}

// BenchmarkCrashAll decides every crash point of a session: in one pass
// (replay_cuts.go), and, for comparison, with one in-memory dry-run
// Reconcile per crash point (quadratic).
func BenchmarkCrashAll(b *testing.B) {
	for _, turns := range []int{25, 100} {
		s := benchReplaySession(b, turns)
		for _, onePass := range []bool{true, false} {
			if !onePass && turns > 25 {
				continue
			}
			b.Run(fmt.Sprintf("events=%d/onePass=%v", s.ev.Len(), onePass), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if rows, _ := crashRowsWith(context.Background(), s, false, 1, nil, onePass); len(rows) != s.ev.Len()+1 {
						b.Fatal(len(rows))
					}
				}
			})
		}
	}
}

// benchDSHV1 is a v1 log of turns tool-using turns, the last one open.
func benchDSHV1(turns int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"b","createdAt":1,"cwd":"/w"}` + "\n")
	seq := 0
	ev := func(typ, data string) {
		fmt.Fprintf(&b, `{"type":%q,"seq":%d,"time":%d,"data":%s}`+"\n", typ, seq, 1000+seq, data)
		seq++
	}
	for t := 1; t <= turns; t++ {
		ev("turn/start", fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}`, t))
		ev("step/start", fmt.Sprintf(`{"turn":%d,"step":1}`, t))
		for i := range 10 {
			ev("assistant/chunk", fmt.Sprintf(`{"turn":%d,"step":1,"chunk":{"type":"text-delta","index":0,"text":"t%d"}}`, t, i))
		}
		ev("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"content":[{"type":"tool-call","id":"c%d","name":"bash","arguments":"{}"}]}`, t, t))
		ev("tool/call", fmt.Sprintf(`{"turn":%d,"step":1,"callId":"c%d","name":"bash","arguments":"{}"}`, t, t))
		if t == turns {
			break
		}
		ev("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"callId":"c%d","content":[{"type":"text","text":"ok"}],"isError":false}`, t, t))
		ev("step/end", fmt.Sprintf(`{"turn":%d,"step":1}`, t))
		ev("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, t))
	}
	return b.Bytes()
}

// BenchmarkDSHCrashAll decides every crash point of a v1 log: streamed (the
// recovery scan fed as the log is read, replay_dsh_stream.go), and, for
// comparison, the whole-file way (a RecoverV1 of each cut's bytes:
// quadratic).
func BenchmarkDSHCrashAll(b *testing.B) {
	for _, turns := range []int{20, 200} {
		data := benchDSHV1(turns)
		for _, streamed := range []bool{true, false} {
			if !streamed && turns > 20 {
				continue
			}
			b.Run(fmt.Sprintf("turns=%d/streamed=%v", turns, streamed), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if streamed {
						s, err := openDSHStream("b.jsonl", bytes.NewReader(data), 0)
						if err != nil {
							b.Fatal(err)
						}
						rows := 0
						err = s.walk(dshWalk{
							at: func(n int, p dshPoint) error {
								if p.outcome(false).Verdict == "" {
									return fmt.Errorf("crash point %d: no verdict", n)
								}
								rows++
								return nil
							},
							step: func(events.Event) error { return nil },
						})
						if err != nil || rows != s.total+1 {
							b.Fatal(rows, err)
						}
					} else {
						s, err := newDSHSession("b.jsonl", data)
						if err != nil {
							b.Fatal(err)
						}
						for n := 0; n <= s.ev.Len(); n++ {
							decide(context.Background(), s, n, false, 0)
						}
					}
				}
			})
		}
	}
}
