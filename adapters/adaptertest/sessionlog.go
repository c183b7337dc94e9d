package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/dsh"
)

// SessionLogFactory makes a fresh, empty session log for one test. reopen
// returns a new instance over the same storage with none of the first one's
// in-process state — a process restart.
type SessionLogFactory func(t *testing.T) (log adapters.SessionLog, reopen func() adapters.SessionLog)

// RunSessionLogContract proves an adapters.SessionLog implementation: dsh's
// runPersistenceContract (the ten cases of deepseek-dsh.md §4.1, under their
// dsh names), its interruptedTurnClosers cases (§4.2) driven through Load,
// and the backend-independent cases of its JSONL suite (§4.3).
func RunSessionLogContract(t *testing.T, mk SessionLogFactory) {
	t.Helper()
	for _, c := range sessionLogCases {
		t.Run(c.name, func(t *testing.T) {
			log, reopen := mk(t)
			c.run(t, &slEnv{t: t, log: log, reopen: reopen, ctx: context.Background()})
		})
	}
}

type slEnv struct {
	t      *testing.T
	ctx    context.Context
	log    adapters.SessionLog
	reopen func() adapters.SessionLog
}

func strp(s string) *string { return &s }

// SLMeta is dsh's contract fixture meta(id, cwd?).
func SLMeta(id string, cwd ...string) adapters.SessionMeta {
	m := adapters.SessionMeta{Header: dsh.Header{Version: 1, ID: id, CreatedAt: 1000}, Summary: dsh.Summary{UpdatedAt: 1000}}
	if len(cwd) > 0 {
		m.Header.Cwd = strp(cwd[0])
	}
	return m
}

var slUser = &dsh.Source{Kind: "user"}

func slTurnStart(seq, time, turn int64) dsh.Record {
	return dsh.NewRecord(seq, time, &dsh.TurnStart{Turn: turn, Trigger: dsh.Trigger{Kind: "message", Source: slUser}})
}

func slTurnEnd(seq, time, turn int64, kind string) dsh.Record {
	return dsh.NewRecord(seq, time, &dsh.TurnEnd{Turn: turn, Reason: dsh.Reason{Kind: kind}})
}

func slText(s string) []dsh.Block { return []dsh.Block{{Type: "text", Text: s}} }

// OneTurnLog is dsh's contract fixture oneTurnLog(): a complete turn, seq 0..5.
func OneTurnLog() []dsh.Record {
	return []dsh.Record{
		slTurnStart(0, 1, 1),
		dsh.NewRecord(1, 2, &dsh.UserMessage{Content: slText("hi"), Source: *slUser}),
		dsh.NewRecord(2, 3, &dsh.StepStart{Turn: 1, Step: 1}),
		dsh.NewRecord(3, 4, &dsh.AssistantMessage{Turn: 1, Step: 1, Content: slText("hello")}),
		dsh.NewRecord(4, 5, &dsh.StepEnd{Turn: 1, Step: 1}),
		slTurnEnd(5, 6, 1, "completed"),
	}
}

func (e *slEnv) create(m adapters.SessionMeta) {
	e.t.Helper()
	if err := e.log.Create(e.ctx, m); err != nil {
		e.t.Fatalf("create %q: %v", m.Header.ID, err)
	}
}

func (e *slEnv) append(id string, recs ...dsh.Record) {
	e.t.Helper()
	if err := e.log.Append(e.ctx, id, recs); err != nil {
		e.t.Fatalf("append %q: %v", id, err)
	}
}

func (e *slEnv) load(id string) adapters.LoadedSession {
	e.t.Helper()
	ls, err := e.log.Load(e.ctx, id)
	if err != nil {
		e.t.Fatalf("load %q: %v", id, err)
	}
	return ls
}

func slLoad(t *testing.T, log adapters.SessionLog, id string) adapters.LoadedSession {
	t.Helper()
	ls, err := log.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("load %q: %v", id, err)
	}
	return ls
}

func (e *slEnv) has(id string) bool {
	e.t.Helper()
	ok, err := e.log.Has(e.ctx, id)
	if err != nil {
		e.t.Fatalf("has %q: %v", id, err)
	}
	return ok
}

func (e *slEnv) listed(id string) bool {
	e.t.Helper()
	ms, err := e.log.List(e.ctx)
	if err != nil {
		e.t.Fatalf("list: %v", err)
	}
	for _, m := range ms {
		if m.Header.ID == id {
			return true
		}
	}
	return false
}

func slTypes(recs []dsh.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Type
	}
	return out
}

func slSeqsOK(t *testing.T, recs []dsh.Record, n int) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("got %d events %v, want seqs 0..%d", len(recs), slTypes(recs), n-1)
	}
	for i, r := range recs {
		if r.Seq != int64(i) {
			t.Fatalf("event %d has seq %d", i, r.Seq)
		}
	}
}

// slRecs compares records by their written bytes, the identity that matters.
func slRecs(t *testing.T, got, want []dsh.Record) {
	t.Helper()
	line := func(rs []dsh.Record) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = string(dsh.AppendRecord(nil, r))
		}
		return out
	}
	if diff := cmp.Diff(line(want), line(got)); diff != "" {
		t.Fatalf("events differ (-want +got):\n%s", diff)
	}
}

func slLastReason(t *testing.T, recs []dsh.Record) string {
	t.Helper()
	last := recs[len(recs)-1]
	p, ok := last.Payload().(*dsh.TurnEnd)
	if !ok {
		t.Fatalf("last event is %s, want turn/end", last.Type)
	}
	return p.Reason.Kind
}

type slCase struct {
	name string
	run  func(t *testing.T, e *slEnv)
}

var sessionLogCases = []slCase{
	// --- dsh runPersistenceContract (§4.1) ---
	{"round-trips a session: create + append → load returns identical meta and byte-identical events", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("s1", "/work"))
		e.append("s1", OneTurnLog()...)
		ls := e.load("s1")
		if ls.Meta.Header.Version != 1 || ls.Meta.Header.ID != "s1" || ls.Meta.Header.Cwd == nil || *ls.Meta.Header.Cwd != "/work" {
			t.Fatalf("meta %+v", ls.Meta.Header)
		}
		slRecs(t, ls.Events, OneTurnLog())
		if len(ls.Repair.Closers) != 0 || ls.Repair.TruncatedBytes != 0 {
			t.Fatalf("a clean log was repaired: %+v", ls.Repair)
		}
	}},
	{"crash recovery: load preserves an interrupted (unclosed) turn and closes it with turn/end {interrupted}", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("interrupted"))
		e.append("interrupted", OneTurnLog()...)
		e.append("interrupted", slTurnStart(6, 7, 2), dsh.NewRecord(7, 8, &dsh.StepStart{Turn: 2, Step: 1}))
		ls := e.load("interrupted")
		want := []string{"turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end", "turn/start", "step/start", "step/end", "turn/end"}
		if diff := cmp.Diff(want, slTypes(ls.Events)); diff != "" {
			t.Fatal(diff)
		}
		slSeqsOK(t, ls.Events, 10)
		if r := slLastReason(t, ls.Events); r != "interrupted" {
			t.Fatalf("last reason %q", r)
		}
		e.append("interrupted", slTurnStart(10, 11, 3), slTurnEnd(11, 12, 3, "completed"))
		slSeqsOK(t, e.load("interrupted").Events, 12)
	}},
	{"crash recovery: an interrupted tool call gets a synthetic error result so resume is a valid transcript", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("interrupted-toolcall"))
		e.append("interrupted-toolcall", OneTurnLog()...)
		e.append("interrupted-toolcall", slTurnStart(6, 7, 2), dsh.NewRecord(7, 8, &dsh.StepStart{Turn: 2, Step: 1}),
			dsh.NewRecord(8, 9, &dsh.AssistantMessage{Turn: 2, Step: 1, Content: []dsh.Block{{Type: "tool-call", ID: "call-x", Name: "bash", Arguments: "{}"}}}))
		ls := e.load("interrupted-toolcall")
		want := append(slTypes(OneTurnLog()), "turn/start", "step/start", "assistant/message", "tool/result", "step/end", "turn/end")
		if diff := cmp.Diff(want, slTypes(ls.Events)); diff != "" {
			t.Fatal(diff)
		}
		res, ok := ls.Events[9].Payload().(*dsh.ToolResult)
		if !ok || res.CallID != "call-x" || !res.IsError || res.Error == nil || res.Error.Code != "interrupted" {
			t.Fatalf("synthetic result %s", ls.Events[9].Data)
		}
		am := ls.Events[8].Payload().(*dsh.AssistantMessage)
		if am.Content[0].ID != "call-x" {
			t.Fatalf("assistant message changed: %s", ls.Events[8].Data)
		}
	}},
	{"has()/list() exclude a created-but-never-appended (zero-event) session", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("empty"))
		if e.has("empty") || e.listed("empty") {
			t.Fatal("a zero-event session is visible")
		}
	}},
	{"has()/list() include a session once it has events", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("s2"))
		e.append("s2", OneTurnLog()...)
		if !e.has("s2") || !e.listed("s2") {
			t.Fatal("session with events is not visible")
		}
	}},
	{"append rejects a batch whose first seq does not match the stored next-seq", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("s3"))
		e.append("s3", OneTurnLog()...)
		err := e.log.Append(e.ctx, "s3", OneTurnLog())
		if !errors.Is(err, adapters.ErrSeqMismatch) || !strings.Contains(err.Error(), "seq mismatch") {
			t.Fatalf("got %v, want ErrSeqMismatch", err)
		}
		slSeqsOK(t, e.load("s3").Events, 6)
	}},
	{"append rejects a mid-batch seq gap", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("s4"))
		err := e.log.Append(e.ctx, "s4", []dsh.Record{slTurnStart(0, 1, 1), dsh.NewRecord(2, 3, &dsh.StepStart{Turn: 1, Step: 1})})
		if !errors.Is(err, adapters.ErrSeqMismatch) {
			t.Fatalf("got %v, want ErrSeqMismatch", err)
		}
		if e.has("s4") {
			t.Fatal("a rejected batch materialized the session")
		}
	}},
	{"append rejects non-JSON-serializable event data, naming the event type", func(t *testing.T, e *slEnv) {
		// Go cannot hold a BigInt or a function; what reaches a Go backend
		// is data that is not JSON: the spellings JavaScript would have
		// produced for them, and plain garbage.
		for i, bad := range []string{`1n`, `undefined`, `Infinity`, `()=>0`, `{"extra":undefined}`, `{"extra":NaN}`, `{"a":`, ``} {
			id := fmt.Sprintf("s5-%d", i)
			e.create(SLMeta(id))
			err := e.log.Append(e.ctx, id, []dsh.Record{{Type: "user/message", Seq: 0, Time: 1, Data: []byte(bad)}})
			if err == nil || !strings.Contains(err.Error(), "user/message") || !errors.Is(err, dsh.ErrNotSerializable) {
				t.Fatalf("data %q: got %v, want an error naming user/message", bad, err)
			}
			if e.has(id) {
				t.Fatalf("data %q materialized the session", bad)
			}
		}
	}},
	{"delete removes a session", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("s6"))
		e.append("s6", OneTurnLog()...)
		if !e.has("s6") {
			t.Fatal("not stored")
		}
		if err := e.log.Delete(e.ctx, "s6"); err != nil {
			t.Fatal(err)
		}
		if e.has("s6") || e.listed("s6") {
			t.Fatal("still there after delete")
		}
		if _, err := e.log.Load(e.ctx, "s6"); !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("load after delete: %v", err)
		}
	}},
	{"update mutates summary fields without touching the event log", func(t *testing.T, e *slEnv) {
		e.create(SLMeta("s7"))
		e.append("s7", OneTurnLog()...)
		if err := e.log.UpdateSummary(e.ctx, "s7", dsh.SummaryPatch{Title: strp("My session"), FirstPrompt: strp("hi")}); err != nil {
			t.Fatal(err)
		}
		ls := e.load("s7")
		if ls.Meta.Summary.Title == nil || *ls.Meta.Summary.Title != "My session" || ls.Meta.Summary.FirstPrompt == nil || *ls.Meta.Summary.FirstPrompt != "hi" {
			t.Fatalf("summary %+v", ls.Meta.Summary)
		}
		slRecs(t, ls.Events, OneTurnLog())
		ls = slLoad(t, e.reopen(), "s7")
		if ls.Meta.Summary.Title == nil || *ls.Meta.Summary.Title != "My session" {
			t.Fatalf("summary not stored: %+v", ls.Meta.Summary)
		}
	}},
}
