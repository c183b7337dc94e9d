package simulations

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

// DSHResult is one dsh log driven to a crash and loaded back.
type DSHResult struct {
	Ran        bool // a dsh log was driven (one per model run)
	Appended   int  // events acknowledged before the crash
	Repaired   bool
	Violations []string
}

const dshSession = "sim-dsh-session"

// dshBatches draws the same turn shapes the Qwen model runs — user turns
// with steps, tool calls with and without results, errors — as dsh v1
// event batches, one batch per Append the way dsh's persistence flushes.
func dshBatches(src Source, prof *Profile) [][]dsh.Record {
	var out [][]dsh.Record
	seq, clock := int64(0), int64(recordBaseMs)
	user := &dsh.Source{Kind: "user"}
	next := func(p dsh.Payload) dsh.Record {
		clock += int64(src.IntN(1000))
		r := dsh.NewRecord(seq, clock, p)
		seq++
		return r
	}
	text := func(s string) []dsh.Block { return []dsh.Block{{Type: "text", Text: s}} }
	turnsN := 1 + src.IntN(3)
	for t := int64(1); t <= int64(turnsN); t++ {
		out = append(out, []dsh.Record{
			next(&dsh.TurnStart{Turn: t, Trigger: dsh.Trigger{Kind: "message", Source: user}}),
			next(&dsh.UserMessage{Content: text("please do the next thing"), Source: *user}),
		})
		steps := 1 + src.IntN(3)
		for s := int64(1); s <= int64(steps); s++ {
			out = append(out, []dsh.Record{next(&dsh.StepStart{Turn: t, Step: s})})
			if s == int64(steps) {
				out = append(out, []dsh.Record{next(&dsh.AssistantMessage{Turn: t, Step: s, Content: text("done.")}), next(&dsh.StepEnd{Turn: t, Step: s})})
				break
			}
			n := 1 + src.IntN(2)
			var blocks []dsh.Block
			var ids []string
			for i := 0; i < n; i++ {
				id := "call_" + strconv.FormatInt(t, 10) + "_" + strconv.FormatInt(s, 10) + "_" + strconv.Itoa(i)
				ids = append(ids, id)
				blocks = append(blocks, dsh.Block{Type: "tool-call", ID: id, Name: "bash", Arguments: `{"command":"ls"}`})
			}
			out = append(out, []dsh.Record{next(&dsh.AssistantMessage{Turn: t, Step: s, Content: blocks})})
			for _, id := range ids {
				out = append(out, []dsh.Record{next(&dsh.ToolCall{Turn: t, Step: s, CallID: id, Name: "bash", Arguments: `{"command":"ls"}`})})
				if src.IntN(100) < prof.ErrPct {
					msg := "tool crashed"
					out = append(out, []dsh.Record{next(&dsh.ErrorEvent{Turn: t, Step: s, Message: msg})})
				}
				out = append(out, []dsh.Record{next(&dsh.ToolResult{Turn: t, Step: s, CallID: id, Content: text("ok")})})
			}
			out = append(out, []dsh.Record{next(&dsh.StepEnd{Turn: t, Step: s})})
		}
		out = append(out, []dsh.Record{next(&dsh.TurnEnd{Turn: t, Reason: dsh.Reason{Kind: "completed"}})})
	}
	return out
}

// RunDSH drives one dsh session log through the session-log contract
// (adapters.SessionLog over the strict memory FS), crashes it inside a
// random append at a random byte — a kill keeps the page cache, a power
// loss keeps a random prefix of the unsynced bytes — and loads it back with
// a fresh process. Invariants: every acknowledged event survives, in order;
// the loaded log is balanced (no open turn); a second load changes nothing.
func RunDSH(ctx context.Context, src Source, prof *Profile) DSHResult {
	res := DSHResult{Ran: true}
	fail := func(format string, args ...any) DSHResult {
		res.Violations = append(res.Violations, "dsh: "+fmt.Sprintf(format, args...))
		return res
	}
	clock := time.UnixMilli(recordBaseMs)
	opts := dshlog.Options{Now: func() time.Time { return clock }}
	log := memory.NewDSHLogOn(memory.NewFS(), memory.DefaultDSHRoot, opts)
	mem := log.Mem()
	meta := adapters.SessionMeta{Header: dsh.Header{Version: dsh.Version, ID: dshSession, CreatedAt: recordBaseMs}}
	if err := log.Create(ctx, meta); err != nil {
		return fail("create: %v", err)
	}
	batches := dshBatches(src, prof)
	crashAt := src.IntN(len(batches) + 1)
	var acked []dsh.Record
	for i, b := range batches {
		if i == crashAt {
			mem.Inject(memory.Fault{Op: memory.OpWrite, Torn: src.IntN(256), Crash: true})
		}
		if err := log.Append(ctx, dshSession, b); err != nil {
			if errors.Is(err, memory.ErrCrashed) {
				break
			}
			return fail("append batch %d: %v", i, err)
		}
		acked = append(acked, b...)
	}
	res.Appended = len(acked)
	mem.ClearFaults()
	if src.IntN(100) < prof.PowerPct {
		mem.CrashKeeping(func(_ string, b []byte) int { return src.IntN(len(b) + 1) })
	} else {
		mem.CrashKeeping(func(_ string, b []byte) int { return len(b) })
	}
	log = memory.NewDSHLogOn(mem, memory.DefaultDSHRoot, opts)
	ls, err := log.Load(ctx, dshSession)
	if errors.Is(err, adapters.ErrNotFound) && len(acked) == 0 {
		return res
	}
	if err != nil {
		return fail("load after a crash with %d events acknowledged: %v", len(acked), err)
	}
	if len(ls.Events) < len(acked) {
		return fail("load returned %d events, %d were acknowledged", len(ls.Events), len(acked))
	}
	for i, r := range acked {
		g := ls.Events[i]
		if g.Type != r.Type || g.Seq != r.Seq || g.Time != r.Time || !bytes.Equal(g.Data, r.Data) {
			return fail("acknowledged event %d changed: %s", i, dsh.AppendRecord(nil, g))
		}
	}
	for i, r := range ls.Events {
		if r.Seq != int64(i) {
			return fail("event %d has seq %d", i, r.Seq)
		}
	}
	var enc turns.Enclosure
	for _, r := range ls.Events {
		if err := enc.Apply(r); err != nil {
			return fail("loaded log unreadable: %v", err)
		}
	}
	if !enc.Balanced() {
		return fail("loaded log is not balanced: turn open after %d events", len(ls.Events))
	}
	res.Repaired = len(ls.Repair.Closers) > 0 || ls.Repair.TruncatedBytes > 0
	again, err := memory.NewDSHLogOn(mem, memory.DefaultDSHRoot, opts).Load(ctx, dshSession)
	if err != nil {
		return fail("second load: %v", err)
	}
	if len(again.Repair.Closers) > 0 || again.Repair.TruncatedBytes > 0 || len(again.Events) != len(ls.Events) {
		return fail("second load repaired again: %d closers, %d bytes cut", len(again.Repair.Closers), again.Repair.TruncatedBytes)
	}
	return res
}
