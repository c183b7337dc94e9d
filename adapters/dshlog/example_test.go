package dshlog_test

import (
	"context"
	"fmt"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/dsh"
)

// A session whose process died mid-turn loads closed, not truncated.
func ExampleDSHLog() {
	ctx := context.Background()
	fsys := memory.NewFS() // or vfs.OS
	log := dshlog.New(fsys, "/home/me/.dsh/sessions", dshlog.Options{})

	cwd := "/proj"
	_ = log.Create(ctx, adapters.SessionMeta{Header: dsh.Header{Version: 1, ID: "sess-01", CreatedAt: 1000, Cwd: &cwd}})
	user := &dsh.Source{Kind: "user"}
	_ = log.Append(ctx, "sess-01", []dsh.Record{
		dsh.NewRecord(0, 1001, &dsh.TurnStart{Turn: 1, Trigger: dsh.Trigger{Kind: "message", Source: user}}),
		dsh.NewRecord(1, 1002, &dsh.StepStart{Turn: 1, Step: 1}),
		dsh.NewRecord(2, 1003, &dsh.AssistantMessage{Turn: 1, Step: 1, Content: []dsh.Block{
			{Type: "tool-call", ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`}}}),
	})
	// ... the process dies; a new one loads the session:
	ls, err := dshlog.New(fsys, "/home/me/.dsh/sessions", dshlog.Options{}).Load(ctx, "sess-01")
	if err != nil {
		fmt.Println(err)
		return
	}
	path, _ := log.LogPath(&cwd, "sess-01")
	fmt.Println(path)
	for _, r := range ls.Events {
		fmt.Println(r.Seq, r.Type, r.Payload().Describe())
	}
	// Output:
	// /home/me/.dsh/sessions/cwd-79903f0c2002/sess-01.jsonl
	// 0 turn/start turn=1 trigger=message/user
	// 1 step/start turn=1 step=1
	// 2 assistant/message turn=1 step=1 content=[tool-call call_1 bash]
	// 3 tool/result turn=1 step=1 call=call_1 isError error=InterruptedError/interrupted content=[text "Tool call interrupted by a crash; no result was …"(57B)]
	// 4 step/end turn=1 step=1
	// 5 turn/end turn=1 reason=interrupted
}
