package tailproof

import (
	"context"
	"errors"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
)

// The parts a status prints carry their exact JSON, read back from their
// records after the walk: a prompt glued after another record on one line,
// parts that decode alike but differ in bytes, each matched in order.
func TestStatusReadsBackExactParts(t *testing.T) {
	store := memory.NewQwenStore()
	sid := "00000000-0000-4000-8000-000000000004"
	path, _ := store.Layout().TranscriptPath(sid, jsonl.Active)
	const (
		p1 = `{"text":"same"}`
		p2 = `{"text":"same","x":[1, 2]}`
		p3 = `{"text":"run \u0074he tests"}`
	)
	transcript := `{"uuid":"a0","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:00.000Z","type":"assistant","provenance":"assistant_output","message":{"role":"model","parts":[{"text":"hi"}]}}` +
		`{"uuid":"u1","parentUuid":"a0","sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[` + p1 + `,` + p2 + `,` + p3 + `]}}` + "\n"
	if err := store.Mem().WriteFile(path, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Status(context.Background(), store, sid, StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range st.Resend {
		got = append(got, string(p.Part.Raw))
	}
	if len(got) != 3 || got[0] != p1 || got[1] != p2 || got[2] != p3 {
		t.Fatalf("%s: resend %q, want %q", st.Kind, got, []string{p1, p2, p3})
	}

	// The file changed between the walk and the read-back: said, not guessed.
	st.Resend[0].Part.Raw, st.Resend[0].Source.Pos.Offset = nil, 3
	if err := fillPayloads(context.Background(), store, sid, &st, 0); !errors.Is(err, ErrPayloadMoved) {
		t.Fatalf("a part whose record moved: %v, want ErrPayloadMoved", err)
	}
}
