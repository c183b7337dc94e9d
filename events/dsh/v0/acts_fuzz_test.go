package v0_test

import (
	"bytes"
	"testing"

	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// FuzzHarness feeds arbitrary logical v0 logs through v0.Harness (line
// codec, mapper, fold, verdicts): it never panics and every act lies
// inside the input.
func FuzzHarness(f *testing.F) {
	hdr := `{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}` + "\n"
	f.Add([]byte(hdr + `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n" +
		`{"type":"assistant/message","seq":1,"time":2,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash"}],"source":{"kind":"model"}}}}` + "\n"))
	f.Add([]byte(hdr + `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}` + "\n"))
	f.Add([]byte(hdr + `{"type":"tool/result","seq":0,"time":1,"data":{"callId":"c1","content":[],"isError":true}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for a, err := range turn.Read(bytes.NewReader(b), v0.Harness()) {
			if err != nil {
				t.Fatal(err)
			}
			if a.Pos.Offset < 0 || a.Pos.Offset > int64(len(b)) {
				t.Fatalf("act %s at offset %d of %d bytes", a.Describe(), a.Pos.Offset, len(b))
			}
		}
		if _, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(b), v0.Harness()), turnverdict.Options{WriterStopped: true}); err != nil {
			t.Fatal(err)
		}
	})
}
