package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
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
