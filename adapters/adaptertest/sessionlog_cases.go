package adaptertest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/dsh"
)

func slStep(seq, turn, step int64) dsh.Record {
	return dsh.NewRecord(seq, seq, &dsh.StepStart{Turn: turn, Step: step})
}

func slCalls(seq, turn, step int64, ids ...string) dsh.Record {
	var bs []dsh.Block
	for _, id := range ids {
		bs = append(bs, dsh.Block{Type: "tool-call", ID: id, Name: "bash", Arguments: "{}"})
	}
	return dsh.NewRecord(seq, seq, &dsh.AssistantMessage{Turn: turn, Step: step, Content: bs})
}

func slResult(seq, turn, step int64, id string) dsh.Record {
	return dsh.NewRecord(seq, seq, &dsh.ToolResult{Turn: turn, Step: step, CallID: id, Content: slText("ok")})
}

// The interruptedTurnClosers cases (§4.2), through a store: append the log,
// load, and compare the closers appended; a second load finds the log
// balanced and changes nothing.
var slCloserCases = []struct {
	name    string
	log     []dsh.Record
	closers []string
	callIDs []string
}{
	{"balanced", []dsh.Record{slTurnStart(0, 0, 1), slTurnEnd(1, 1, 1, "completed")}, nil, nil},
	{"open turn", []dsh.Record{slTurnStart(0, 0, 1)}, []string{"turn/end"}, nil},
	{"open step", []dsh.Record{slTurnStart(0, 0, 1), slStep(1, 1, 1)}, []string{"step/end", "turn/end"}, nil},
	{"unanswered call", []dsh.Record{slTurnStart(0, 0, 2), slStep(1, 2, 1), slCalls(2, 2, 1, "call-1")},
		[]string{"tool/result", "step/end", "turn/end"}, []string{"call-1"}},
	{"answered call", []dsh.Record{slTurnStart(0, 0, 2), slStep(1, 2, 1), slCalls(2, 2, 1, "call-1"), slResult(3, 2, 1, "call-1")},
		[]string{"step/end", "turn/end"}, nil},
	{"earlier turn forgotten", []dsh.Record{slTurnStart(0, 0, 1), slStep(1, 1, 1), slCalls(2, 1, 1, "old-call"), slResult(3, 1, 1, "old-call"),
		dsh.NewRecord(4, 4, &dsh.StepEnd{Turn: 1, Step: 1}), slTurnEnd(5, 5, 1, "completed"),
		slTurnStart(6, 6, 2), slStep(7, 2, 1), slCalls(8, 2, 1, "new-call")},
		[]string{"tool/result", "step/end", "turn/end"}, []string{"new-call"}},
	{"two calls one answered", []dsh.Record{slTurnStart(0, 0, 1), slStep(1, 1, 1), slCalls(2, 1, 1, "call-a", "call-b"), slResult(3, 1, 1, "call-a")},
		[]string{"tool/result", "step/end", "turn/end"}, []string{"call-b"}},
}

func init() {
	for _, c := range slCloserCases {
		sessionLogCases = append(sessionLogCases, slCase{"closers: " + c.name, func(t *testing.T, e *slEnv) {
			e.create(SLMeta("c"))
			e.append("c", c.log...)
			ls := e.load("c")
			if diff := cmp.Diff(c.closers, slTypes(ls.Repair.Closers), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("closers (-want +got):\n%s", diff)
			}
			var ids []string
			for _, r := range ls.Repair.Closers {
				if p, ok := r.Payload().(*dsh.ToolResult); ok {
					if !p.IsError || p.Error == nil || p.Error.Name != "InterruptedError" || p.Error.Code != "interrupted" {
						t.Fatalf("synthetic result %s", r.Data)
					}
					ids = append(ids, p.CallID)
				}
				if r.Time != c.log[len(c.log)-1].Time {
					t.Fatalf("closer time %d, last real time %d", r.Time, c.log[len(c.log)-1].Time)
				}
			}
			if diff := cmp.Diff(c.callIDs, ids, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("synthetic results (-want +got):\n%s", diff)
			}
			slSeqsOK(t, ls.Events, len(c.log)+len(c.closers))
			again := slLoad(t, e.reopen(), "c")
			if len(again.Repair.Closers) != 0 {
				t.Fatalf("second load appended closers again: %v", slTypes(again.Repair.Closers))
			}
			slRecs(t, again.Events, ls.Events)
		}})
	}
	sessionLogCases = append(sessionLogCases, slJSONLCases...)
}

// Backend-independent cases of dsh's JSONL suite (§4.3).
var slJSONLCases = []slCase{
	{"lazy materialization: nothing is stored until the first append", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("lazy", "/work"))
		if e.has("lazy") {
			t.Fatal("visible before any append")
		}
		if _, err := e.reopen().Load(e.ctx, "lazy"); !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("a restart found a never-appended session: %v", err)
		}
		e.append("lazy", OneTurnLog()[:1]...)
		if !e.has("lazy") {
			t.Fatal("not visible after append")
		}
	}},
	{"load of a missing id is ErrNotFound", func(t *testing.T, e *slEnv) {
		if _, err := e.log.Load(e.ctx, "nope"); !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	}},
	{"an empty batch is a no-op", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("e"))
		e.append("e")
		if e.has("e") {
			t.Fatal("an empty batch materialized the session")
		}
	}},
	{"delete of a missing id is a no-op", func(t *testing.T, e *slEnv) {
		if err := e.log.Delete(e.ctx, "nope"); err != nil {
			t.Fatal(err)
		}
	}},
	{"re-appending the stored seqs is a seq mismatch, also after a restart", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("r"))
		e.append("r", OneTurnLog()...)
		if err := e.reopen().Append(e.ctx, "r", OneTurnLog()[5:]); !errors.Is(err, adapters.ErrSeqMismatch) {
			t.Fatalf("got %v", err)
		}
	}},
	{"mutating the caller's batch after append changes nothing", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("m"))
		batch := OneTurnLog()
		e.append("m", batch...)
		batch[1].Data[len(batch[1].Data)-3] = 'X'
		batch[1].Seq = 42
		slRecs(t, e.load("m").Events, OneTurnLog())
	}},
	{"mutating the loaded meta changes nothing", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("mm", "/proj"))
		e.append("mm", OneTurnLog()...)
		ls := e.load("mm")
		*ls.Meta.Header.Cwd = "/evil"
		ls.Meta.Header.ID = "other"
		e.append("mm", slTurnStart(6, 7, 2), slTurnEnd(7, 8, 2, "completed"))
		again := slLoad(t, e.reopen(), "mm")
		if again.Meta.Header.Cwd == nil || *again.Meta.Header.Cwd != "/proj" {
			t.Fatalf("cwd %v", again.Meta.Header.Cwd)
		}
		slSeqsOK(t, again.Events, 8)
	}},
	{"create rejects a tracked id and an id already stored", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("dup", "/a"))
		if err := e.log.Create(e.ctx, SLMeta("dup", "/a")); !errors.Is(err, adapters.ErrSessionExists) {
			t.Fatalf("tracked: %v", err)
		}
		e.append("dup", OneTurnLog()...)
		fresh := e.reopen()
		for _, m := range []adapters.SessionMeta{SLMeta("dup", "/a"), SLMeta("dup", "/other"), SLMeta("dup")} {
			if err := fresh.Create(e.ctx, m); !errors.Is(err, adapters.ErrSessionExists) {
				t.Fatalf("stored under another bucket: %v", err)
			}
		}
		slRecs(t, slLoad(t, fresh, "dup").Events, OneTurnLog())
	}},
	{"a log holding only turn/start loads as turn/start, turn/end{interrupted}", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("only"))
		e.append("only", slTurnStart(0, 1, 1))
		ls := slLoad(t, e.reopen(), "only")
		if diff := cmp.Diff([]string{"turn/start", "turn/end"}, slTypes(ls.Events)); diff != "" {
			t.Fatal(diff)
		}
		if slLastReason(t, ls.Events) != "interrupted" {
			t.Fatal("not interrupted")
		}
	}},
	{"append after a restart adopts the stored log and continues it", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("adopt", "/w"))
		e.append("adopt", OneTurnLog()...)
		e.append("adopt", slTurnStart(6, 7, 2))
		fresh := e.reopen()
		// adoption repairs: the open turn 2 is closed at seq 7 first
		if err := fresh.Append(e.ctx, "adopt", []dsh.Record{slTurnStart(8, 9, 3), slTurnEnd(9, 10, 3, "completed")}); err != nil {
			t.Fatal(err)
		}
		ls := slLoad(t, e.reopen(), "adopt")
		slSeqsOK(t, ls.Events, 10)
		if ls.Events[7].Type != "turn/end" {
			t.Fatalf("seq 7 is %s", ls.Events[7].Type)
		}
	}},
	{"resume: load, then append the next turn", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("resume"))
		e.append("resume", OneTurnLog()...)
		fresh := e.reopen()
		ls := slLoad(t, fresh, "resume")
		n := int64(len(ls.Events))
		if err := fresh.Append(e.ctx, "resume", []dsh.Record{slTurnStart(n, 7, 2), slTurnEnd(n+1, 8, 2, "completed")}); err != nil {
			t.Fatal(err)
		}
		slSeqsOK(t, slLoad(t, e.reopen(), "resume").Events, 8)
	}},
	{"parentSession round-trips", func(t *testing.T, e *slEnv) {
		m := SLMeta("child", "/w")
		m.Header.ParentSession = strp("parent")
		e.create(m)
		e.append("child", OneTurnLog()...)
		ls := slLoad(t, e.reopen(), "child")
		if ls.Meta.Header.ParentSession == nil || *ls.Meta.Header.ParentSession != "parent" {
			t.Fatalf("parent %v", ls.Meta.Header.ParentSession)
		}
	}},
	{"list covers every cwd, including none", func(t *testing.T, e *slEnv) {
		for i, cwd := range []string{"/a", "/b", ""} {
			m := SLMeta(fmt.Sprintf("l%d", i))
			if cwd != "" {
				m.Header.Cwd = strp(cwd)
			}
			e.create(m)
			e.append(m.Header.ID, OneTurnLog()[:1]...)
		}
		ms, err := e.reopen().List(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range ms {
			cwd := "<none>"
			if m.Header.Cwd != nil {
				cwd = *m.Header.Cwd
			}
			got[m.Header.ID] = cwd
		}
		if diff := cmp.Diff(map[string]string{"l0": "/a", "l1": "/b", "l2": "<none>"}, got); diff != "" {
			t.Fatal(diff)
		}
	}},
	{"an empty store lists nothing", func(t *testing.T, e *slEnv) {
		ms, err := e.log.List(e.ctx)
		if err != nil || len(ms) != 0 {
			t.Fatalf("%v %v", ms, err)
		}
	}},
	{"has finds a stored session after a restart whatever its cwd", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("h", "/deep/dir"))
		e.append("h", OneTurnLog()...)
		ok, err := e.reopen().Has(e.ctx, "h")
		if err != nil || !ok {
			t.Fatalf("%v %v", ok, err)
		}
	}},
	{"a lazy session's summary can be updated, and delete removes it after a restart", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("ls", "/w"))
		if err := e.log.UpdateSummary(e.ctx, "ls", dsh.SummaryPatch{Title: strp("t")}); err != nil {
			t.Fatal(err)
		}
		if e.has("ls") {
			t.Fatal("a summary made the session visible")
		}
		if err := e.reopen().Delete(e.ctx, "ls"); err != nil {
			t.Fatal(err)
		}
		// Nothing of it is left: creating it again and appending starts clean.
		fresh := e.reopen()
		if err := fresh.Create(e.ctx, SLMeta("ls", "/w")); err != nil {
			t.Fatal(err)
		}
		if err := fresh.Append(e.ctx, "ls", OneTurnLog()); err != nil {
			t.Fatal(err)
		}
		if ls := slLoad(t, e.reopen(), "ls"); ls.Meta.Summary.Title != nil {
			t.Fatalf("deleted title came back: %q", *ls.Meta.Summary.Title)
		}
	}},
	{"update of an unknown id is ErrNotFound; update adopts a stored log", func(t *testing.T, e *slEnv) {
		if err := e.log.UpdateSummary(e.ctx, "ghost", dsh.SummaryPatch{Title: strp("x")}); !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
		e.create(SLMeta("u"))
		e.append("u", OneTurnLog()...)
		fresh := e.reopen()
		if err := fresh.UpdateSummary(e.ctx, "u", dsh.SummaryPatch{FirstPrompt: strp("hi")}); err != nil {
			t.Fatal(err)
		}
		if ls := slLoad(t, e.reopen(), "u"); ls.Meta.Summary.FirstPrompt == nil || *ls.Meta.Summary.FirstPrompt != "hi" {
			t.Fatalf("summary %+v", ls.Meta.Summary)
		}
	}},
	{"a hostile id is stored and found under its own name", func(t *testing.T, e *slEnv) {
		for _, id := range []string{"../../etc/pwn", "a/b", ".", "..", "~", "a\x00b", "日本"} {
			e.create(SLMeta(id, "/w"))
			e.append(id, OneTurnLog()...)
			ls := slLoad(t, e.reopen(), id)
			if ls.Meta.Header.ID != id {
				t.Fatalf("id %q loaded as %q", id, ls.Meta.Header.ID)
			}
		}
		if _, err := e.log.Load(e.ctx, "etc"); !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("a traversal id leaked a neighbour: %v", err)
		}
		if err := e.log.Create(e.ctx, SLMeta("")); !errors.Is(err, adapters.ErrInvalidSessionID) {
			t.Fatalf("empty id: %v", err)
		}
	}},
}
