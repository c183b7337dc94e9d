package jsonl_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// Where Qwen Code keeps a session's files.
func ExampleQwenLayout() {
	runtime, _ := jsonl.ResolveRuntimeDir(func(string) string { return "" }, "/home/me")
	l := jsonl.NewQwenLayout(runtime, "/tmp/ws-ifVqOn")
	id := "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"
	t, _ := l.TranscriptPath(id, jsonl.Active)
	lg, _ := l.LedgerPath(id, jsonl.Archived)
	_, err := l.LedgerPath("../escape", jsonl.Active)
	fmt.Println(t)
	fmt.Println(lg)
	fmt.Println(err)
	// Output:
	// /home/me/.qwen/projects/-tmp-ws-ifVqOn/chats/0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10.jsonl
	// /home/me/.qwen/projects/-tmp-ws-ifVqOn/chats/archive/0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10.ledger.jsonl
	// jsonl: session id "../escape" contains a path separator: invalid session id
}

// A durable ledger append seals the torn fragment a crash left behind, so
// the reader drops the fragment and keeps the new record.
func ExampleQwenStore_AppendLedger() {
	ctx := context.Background()
	s := memory.NewQwenStore() // jsonl.QwenStore on the strict memory FS
	id := "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"
	_ = s.SeedLedger(ctx, id, []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1}`+"\n"+`{"v":1,"promptId":"p2","sta`))
	_ = s.AppendLedger(ctx, id, ledger.Encode(ledger.Terminal("p1", ledger.Completed, "", "end_turn", 2)))
	rc, _ := s.OpenLedger(ctx, id)
	defer rc.Close()
	recs, dropped, _ := ledger.Read(rc, false)
	for _, r := range recs {
		fmt.Println(string(ledger.Encode(r)))
	}
	fmt.Println("dropped:", dropped)
	// Output:
	// {"v":1,"promptId":"p1","state":"in_flight","at":1}
	// {"v":1,"promptId":"p1","terminal":"completed","stopReason":"end_turn","at":2}
	// dropped: 1
}

// The dispatch marker is the uuid of the last complete record.
func ExampleTailUUID() {
	t := `{"uuid":"u1"}` + "\n" + `{"uuid":"a1"}` + "\n"
	fmt.Println(jsonl.TailUUID(strings.NewReader(t), int64(len(t))))
	torn := t + `{"uuid":"a2","text":"answ`
	fmt.Println(jsonl.TailUUID(strings.NewReader(torn), int64(len(torn))))
	// Output:
	// a1 true
	//  false
}
