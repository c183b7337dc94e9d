package dshlog_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/dsh"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// A session whose process died mid-turn loads closed, not truncated.
func ExampleLog() {
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

// A published-format (v0) log torn by a crash mid-turn: RecoverV0 keeps the
// original bytes aside, cuts the torn line and closes the turn.
func ExampleRecoverV0() {
	fsys := memory.NewFS()
	path := "/home/me/.dsh/sessions/--proj--/s1/session.jsonl"
	_ = fsys.MkdirAll("/home/me/.dsh/sessions/--proj--/s1", 0o700)
	_ = fsys.WriteFile(path, []byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/proj","delegationDepth":0}
{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}
{"type":"step/start","seq":1,"time":11,"data":{"turn":1,"step":1}}
{"type":"assistant/chunk","seq":2,"ti`), 0o600)
	rec, err := dshlog.RecoverV0(fsys, path, v0.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cut", rec.TruncatedBytes, "bytes, kept at", rec.Evidence)
	for _, c := range rec.Plan.Closers {
		fmt.Println(c.Type, c.Seq)
	}
	// Output:
	// cut 37 bytes, kept at /home/me/.dsh/sessions/--proj--/s1/session.jsonl.broken-251
	// step/end 2
	// turn/end 3
}

// Where the published backend (0.1.0-rc.8) keeps a v0 log: the project
// directory keeps the cwd readable, the session directory is the escaped id.
// The paths below are the ones the package's own locate() returns.
func ExampleV0Path() {
	for _, cwd := range []string{"/home/me/proj x", `C:\Users\me`, "/", "/a//b:c/~d/é"} {
		p, _ := dshlog.V0Path("/r", v0.Header{ID: "a/b", Cwd: []byte(strconv.Quote(cwd))}, v0.Zstd)
		fmt.Println(p)
	}
	// Output:
	// /r/--home-me-proj~0020x--/a~002Fb/session.jsonl.zstd
	// /r/--C-Users-me--/a~002Fb/session.jsonl.zstd
	// /r/--root--/a~002Fb/session.jsonl.zstd
	// /r/--a-b-c-~007Ed-~00E9--/a~002Fb/session.jsonl.zstd
}
