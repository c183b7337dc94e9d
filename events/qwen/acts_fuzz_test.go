package qwen_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// FuzzActs: any bytes map to acts without a panic; every act sits inside
// the file, at a line that exists; every line that does not decode is one
// damage act at its own position, classified torn tail, corrupt or too long;
// every decoded record yields at least one act; only prompts carry text;
// and the decider folds the acts without an error
// (go test -run='^$' -fuzz=FuzzActs -fuzztime=60s ./events/qwen).
func FuzzActs(f *testing.F) {
	for _, s := range qwen.FuzzSeeds {
		f.Add([]byte(s + "\n" + s))
	}
	f.Add([]byte(`{"uuid":"u1","parentUuid":null,"sessionId":"S","type":"user","provenance":"real_user","daemonPromptId":"p1","message":{"role":"user","parts":[{"text":"/x y"}]}}` + "\n" + `{"uuid":"x1","parentUuid":"u1","sessionId":"S","type":"system","subtype":"turn_result","systemPayload":{"promptId":"p1","state":"weird"}}` + "\n{\"uuid\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		records := 0
		for _, err := range events.Decode(bytes.NewReader(data), qwen.Codec{}, events.Options{}) {
			if err == nil {
				records++
			}
		}
		seen := map[int]bool{}
		acts := 0
		for a, err := range turn.Read(bytes.NewReader(data), qwen.Harness()) {
			if err != nil {
				t.Fatalf("read error on a byte slice: %v", err)
			}
			acts++
			if a.Pos.Line < 1 || a.Pos.Line > lines || a.Pos.Offset < 0 || a.Pos.Offset > int64(len(data)) {
				t.Fatalf("act %s outside the file (%d lines, %d bytes)", a.Describe(), lines, len(data))
			}
			if a.Kind == turn.KindDamage {
				if a.Damage == nil || a.Damage.Pos != a.Pos || seen[a.Pos.Line] {
					t.Fatalf("damage act %s: error %v", a.Describe(), a.Damage)
				}
				seen[a.Pos.Line] = true
				if !errors.Is(a.Damage, events.ErrTornTail) && !errors.Is(a.Damage, events.ErrCorrupt) && !errors.Is(a.Damage, events.ErrLineTooLong) {
					t.Fatalf("unclassified damage %v", a.Damage)
				}
				continue
			}
			if a.Kind.String() == "" || strings.HasPrefix(a.Kind.String(), "kind(") {
				t.Fatalf("act of no kind: %s", a.Describe())
			}
			if a.Text != "" && a.Kind != turn.KindPrompt {
				t.Fatalf("text on a %s act", a.Kind)
			}
		}
		if acts < records {
			t.Fatalf("%d records mapped to %d acts", records, acts)
		}
		for _, o := range []turnverdict.Options{{}, {WriterStopped: true}} {
			if _, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(data), qwen.Harness()), o); err != nil {
				t.Fatal(err)
			}
		}
	})
}
