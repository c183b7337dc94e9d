package tailproof

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// The scenario notation (testdata/reconcile/*.txt):
//
//	ledger                      one record per line:
//	IF p1 at=1 [tail=u1]          an in_flight admission
//	TERM p1 completed [code=x] [stopReason=y] at=2
//	raw <line>                    a raw line, written as is
//	torn <text>                   a final fragment without newline
//
//	transcript                  one record per line: <uuid> <kind> [args] [options]
//	u1 user "text"               real_user text          a1 assistant "text"
//	a1 fc call-1 [name]           model functionCall (id "-" = no id)
//	r1 fr call-1 [name]           tool_result functionResponse
//	n1 notification               system notification envelope (Qwen's N)
//	c1 compression                chat_compression with compressedHistory
//	s1 slash /help                local slash_command result for /help
//	t1 title "Later title"        custom_title without provenance
//	g1 goal_turn_end call-1       goal_turn_end
//	x1 turn_result p1 completed   turn_result for daemon prompt p1 (cancelled: with
//	                              cancelledAt unless cancelledAt=none; error: with
//	                              error {message, code=<c> when given})
//	d1 bgdone [task-1]            system/background_task_completed (never stamped)
//	y1 telemetry api_response 3   ui_telemetry whose uiEvent.prompt_id is turn 3's
//	y1 telemetry tool_call cron call-1 [name]   (turn: N, cron, side or a literal id;
//	                              see scenarioPromptID)
//	f1 snapshot 3                 file_history_snapshot naming turn 3's prompt id
//	o1 source scheduled_task [id] session_source
//	b1 checkpoint a1 [u1]         branch_checkpoint (assistant a1, start exclusive u1)
//	raw <json> / torn <text>
//	options: @B+2000 (timestamp; default B+n*1000 for the n-th record), parent=x
//	(default: the previous record), prov=real_user|system|none, daemon=p1, cwd=/x|none,
//	version=0.23.0 (this record's version),
//	goal=goal-1/1/turn-1, delivered (deliveredTurn: true; newer writers only),
//	denied (fr: a call the permission step cancelled: toolCallResult status
//	cancelled, executionStatus not_started),
//	partial (an assistant record without usage), bg[=turn-1] (a backgroundTurn stamp, as Qwen Code 0.24.4's createBaseRecord
//	writes on every record of a background notification turn)
//
//	transcript [version=0.24.4] [archived]  every record's version (default 1.0.0); under
//	                              0.24.4 assistant records carry usageMetadata
//	                              unless marked partial (an aborted call's record);
//	                              archived: write the session's archived copy instead
//
//	reconcile [reference] [dry-run] [twice] [trace] [now=MS] [admit-during-load=<prompt>@<at>]
//
// B is Date.UTC(2026,0,1) = 1767225600000, the reference tests' RECORD_BASE_MS.

const recordBaseMs int64 = 1767225600000

const notificationText = `<task-notification><task-id>agent-1</task-id><status>completed</status><summary>Agent "explore" completed.</summary></task-notification>`

type scenario struct {
	store    *memory.QwenStore
	sid      string
	archived bool // the next transcript command writes the archived copy
}

const scenarioSession = "00000000-0000-4000-8000-000000000001"

func TestReconcileScenarios(t *testing.T) {
	runScenarios(t, "testdata/reconcile", map[string]scenarioCmd{"recent-terminals": recentTerminalsCmd})
}

// scenarioCmd runs one scenario command that is not part of the shared
// notation.
type scenarioCmd func(t *testing.T, s *scenario, d *datadriven.TestData) string

// runScenarios runs every file under dir with the shared notation (reset,
// ledger, transcript, reconcile) plus the commands in extra.
func runScenarios(t *testing.T, dir string, extra map[string]scenarioCmd) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		var s *scenario
		reset := func() { s = &scenario{store: memory.NewQwenStore(), sid: scenarioSession} }
		reset()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "reset":
				reset()
				return ""
			case "ledger":
				return s.writeLedger(t, d.Input)
			case "transcript":
				version := "1.0.0"
				if d.HasArg("version") {
					d.ScanArgs(t, "version", &version)
				}
				if d.HasArg("archived") {
					s.archived = true
				}
				return s.writeTranscript(t, d.Input, version)
			case "reconcile":
				return s.reconcile(t, d)
			}
			if cmd, ok := extra[d.Cmd]; ok {
				return cmd(t, s, d)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func recentTerminalsCmd(t *testing.T, s *scenario, _ *datadriven.TestData) string {
	recs, err := RecentTerminals(context.Background(), s.store, s.sid)
	if err != nil {
		return "error: " + err.Error()
	}
	if len(recs) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(r.Describe() + "\n")
	}
	return b.String()
}

func parseMs(t *testing.T, s string) int64 {
	t.Helper()
	s = strings.TrimPrefix(s, "@")
	base := int64(0)
	switch {
	case strings.HasPrefix(s, "B"):
		base, s = recordBaseMs, s[1:]
	}
	if s == "" {
		return base
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	if err != nil {
		t.Fatalf("bad time %q", s)
	}
	return base + n
}

func (s *scenario) paths(t *testing.T) (string, string) {
	l := s.store.Layout()
	tp, err := l.TranscriptPath(s.sid, jsonl.Active)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := l.LedgerPath(s.sid, jsonl.Active)
	if err != nil {
		t.Fatal(err)
	}
	return tp, lp
}

func ledgerLine(t *testing.T, line string) (string, bool) {
	f := strings.Fields(line)
	switch f[0] {
	case "raw":
		return strings.TrimSpace(strings.TrimPrefix(line, "raw")), false
	case "torn":
		return strings.TrimSpace(strings.TrimPrefix(line, "torn")), true
	}
	kv := map[string]string{}
	for _, x := range f[2:] {
		if k, v, ok := strings.Cut(x, "="); ok {
			kv[k] = v
		}
	}
	at := parseMs(t, kv["at"])
	switch f[0] {
	case "IF":
		return string(ledger.Encode(ledger.InFlight(f[1], at, kv["tail"]))), false
	case "TERM":
		return string(ledger.Encode(ledger.Terminal(f[1], ledger.TerminalState(f[2]), kv["code"], kv["stopReason"], at))), false
	}
	t.Fatalf("bad ledger line %q", line)
	return "", false
}

func (s *scenario) writeLedger(t *testing.T, input string) string {
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		l, torn := ledgerLine(t, line)
		b.WriteString(l)
		if !torn {
			b.WriteByte('\n')
		}
	}
	_, lp := s.paths(t)
	if err := s.store.Mem().WriteFile(lp, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return ""
}

// quoted extracts the first "..." argument (Go-quoted).
func quoted(t *testing.T, s string) (string, string) {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return "", s
	}
	j := i + 1
	for ; j < len(s); j++ {
		if s[j] == '\\' {
			j++
			continue
		}
		if s[j] == '"' {
			break
		}
	}
	q, err := strconv.Unquote(s[i : j+1])
	if err != nil {
		t.Fatalf("bad quoted text in %q", s)
	}
	return q, s[:i] + s[j+1:]
}

func (s *scenario) writeTranscript(t *testing.T, input, version string) string {
	var b bytes.Buffer
	prev := ""
	for n, line := range strings.Split(strings.TrimSpace(input), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "raw ") {
			b.WriteString(strings.TrimPrefix(line, "raw ") + "\n")
			continue
		}
		if strings.HasPrefix(line, "torn ") {
			b.WriteString(strings.TrimPrefix(line, "torn "))
			continue
		}
		text, rest := quoted(t, line)
		f := strings.Fields(rest)
		uuid, kind := f[0], f[1]
		args := []string{}
		opts := map[string]string{}
		for _, x := range f[2:] {
			switch {
			case strings.HasPrefix(x, "@"):
				opts["@"] = x
			case strings.Contains(x, "="):
				k, v, _ := strings.Cut(x, "=")
				opts[k] = v
			case x == "delivered":
				opts["delivered"] = "true"
			case x == "bg":
				opts["bg"] = "turn-1"
			case x == "partial":
				opts["partial"] = "true"
			case x == "denied":
				opts["denied"] = "true"
			default:
				args = append(args, x)
			}
		}
		ts := recordBaseMs + int64(n+1)*1000
		if at, ok := opts["@"]; ok {
			ts = parseMs(t, at)
		}
		rec := map[string]any{
			"uuid": uuid, "parentUuid": nil, "sessionId": "S",
			"timestamp": time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z"),
			"cwd":       memory.DefaultQwenLayout.Cwd, "version": version,
		}
		if p, ok := opts["parent"]; ok {
			rec["parentUuid"] = p
		} else if prev != "" {
			rec["parentUuid"] = prev
		}
		prov := scenarioRecord(t, rec, kind, text, args, ts)
		if p, ok := opts["prov"]; ok {
			prov = p
		}
		if prov != "" && prov != "none" {
			rec["provenance"] = prov
		}
		if c, ok := opts["cwd"]; ok {
			rec["cwd"] = c
			if c == "none" {
				delete(rec, "cwd")
			}
		}
		if d, ok := opts["daemon"]; ok {
			rec["daemonPromptId"] = d
		}
		if v, ok := opts["version"]; ok {
			rec["version"] = v // one record of another writer
		}
		if g, ok := opts["goal"]; ok {
			parts := strings.SplitN(g, "/", 3)
			rev, _ := strconv.Atoi(parts[1])
			rec["goalContext"] = map[string]any{"goalId": parts[0], "revision": rev, "turnId": parts[2]}
		}
		if _, ok := opts["delivered"]; ok {
			rec["deliveredTurn"] = true
		}
		if p, ok := rec["systemPayload"].(map[string]any); ok && kind == "turn_result" {
			// #settleTurnRecording's payload: cancelledAt only for a recorded
			// cancel, error (normalizeTurnResultError) only for state error.
			if opts["cancelledAt"] == "none" {
				delete(p, "cancelledAt")
			}
			if args[1] == "error" {
				e := map[string]any{"message": "Internal error"}
				if c, ok := opts["code"]; ok {
					e["code"] = c
				}
				p["error"] = e
			}
		}
		if _, denied := opts["denied"]; denied && kind == "fr" {
			// A call the permission step cancelled (0.24.4's
			// earlyErrorResponse: status cancelled, executionStatus
			// not_started, no resultDisplay).
			rec["toolCallResult"] = map[string]any{"callId": args[0], "status": "cancelled", "executionStatus": "not_started"}
			rec["message"] = map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{
				"id": args[0], "name": "run_shell_command", "response": map[string]any{"error": "Tool \"run_shell_command\" was canceled by the user."}}}}}
		}
		if _, partial := opts["partial"]; version == "0.24.4" && rec["type"] == "assistant" && !partial {
			// recordAssistantTurn writes the call's usage for a stream that
			// completed; an aborted call's partial record has none.
			rec["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
		}
		if turn, ok := opts["bg"]; ok {
			// The shape of 0.24.4's notification turn identity
			// (#drainNotificationQueueExclusive in the ACP agent chunk).
			rec["backgroundTurn"] = map[string]any{"turnId": "S########notification" + turn,
				"taskId": "task-1", "kind": "agent", "startedAt": recordBaseMs}
		}
		out, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
		b.WriteByte('\n')
		prev = uuid
	}
	tp, _ := s.paths(t)
	if s.archived {
		// An archived copy (chats/archive/): the active file is written by
		// a later transcript command.
		s.archived = false
		var err error
		if tp, err = s.store.Layout().TranscriptPath(s.sid, jsonl.Archived); err != nil {
			t.Fatal(err)
		}
		if err := s.store.Mem().MkdirAll(filepath.Dir(tp), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.store.Mem().WriteFile(tp, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return ""
}

// admitDuringLoad appends an admission when the transcript is first opened:
// the reference test's loadSession override (a prompt admitted while the
// decision was being made).
type admitDuringLoad struct {
	*memory.QwenStore
	line []byte
	done bool
}

func (a *admitDuringLoad) OpenTranscript(ctx context.Context, sid string) (io.ReadCloser, error) {
	if !a.done {
		a.done = true
		if err := a.QwenStore.AppendLedger(ctx, sid, a.line); err != nil {
			return nil, err
		}
	}
	return a.QwenStore.OpenTranscript(ctx, sid)
}

// checkNoTrace decides the scenario's evidence twice as a dry run, traced
// and with NoTrace, and fails unless the decisions are the same but for
// their (then empty) trace: NoTrace only skips formatting.
func checkNoTrace(t *testing.T, store *memory.QwenStore, sid string, opts Options) {
	t.Helper()
	opts.DryRun = true
	traced, terr := Reconcile(context.Background(), store, sid, opts)
	opts.NoTrace = true
	quiet, qerr := Reconcile(context.Background(), store, sid, opts)
	if fmt.Sprint(terr) != fmt.Sprint(qerr) {
		t.Fatalf("NoTrace changed the error: %v, traced %v", qerr, terr)
	}
	if len(quiet.Trace) != 0 {
		t.Fatalf("NoTrace left a trace: %q", quiet.Trace)
	}
	for i := range quiet.Decisions {
		if len(quiet.Decisions[i].Trace) != 0 {
			t.Fatalf("NoTrace left decision %d's trace: %q", i, quiet.Decisions[i].Trace)
		}
	}
	traced.Trace = nil
	for i := range traced.Decisions {
		traced.Decisions[i].Trace = nil
	}
	all := cmp.Exporter(func(reflect.Type) bool { return true }) // ledger.Record keeps its raw fields unexported
	if diff := cmp.Diff(traced, quiet, all); diff != "" {
		t.Fatalf("NoTrace changed the decisions (-traced +quiet):\n%s", diff)
	}
}

func (s *scenario) reconcile(t *testing.T, d *datadriven.TestData) string {
	opts := Options{Now: func() int64 { return 1900000000000 }}
	var store adapters.Store = s.store
	times := 1
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "reference":
			opts.Reference = true
		case "dry-run":
			opts.DryRun = true
		case "twice":
			times = 2
		case "trace":
		case "now":
			n := parseMs(t, arg.Vals[0])
			opts.Now = func() int64 { return n }
		case "admit-during-load":
			id, at, _ := strings.Cut(arg.Vals[0], "@")
			l := ledger.Encode(ledger.InFlight(id, parseMs(t, at), ""))
			store = &admitDuringLoad{QwenStore: s.store, line: l}
		default:
			t.Fatalf("unknown reconcile argument %q", arg.Key)
		}
	}
	var out strings.Builder
	for i := 0; i < times; i++ {
		if times > 1 {
			fmt.Fprintf(&out, "run %d:\n", i+1)
		}
		if store == adapters.Store(s.store) {
			checkNoTrace(t, s.store, s.sid, opts)
			checkMemo(t, s.store, s.sid, opts)
		}
		res, err := Reconcile(context.Background(), store, s.sid, opts)
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
		}
		if len(res.Decisions) == 0 {
			out.WriteString("verdict: none\n")
		}
		for _, dec := range res.Decisions {
			fmt.Fprintf(&out, "verdict: %s (target %s)\n", dec.Verdict, dec.Target)
			for _, v := range dec.Vetoes {
				fmt.Fprintf(&out, "veto %s\n", v)
			}
			if dec.Appended != nil {
				verb := "appended"
				if opts.DryRun {
					verb = "would append"
				}
				fmt.Fprintf(&out, "%s: %s\n", verb, dec.Line)
			}
		}
		if d.HasArg("trace") {
			for _, line := range res.Trace {
				fmt.Fprintf(&out, "  %s\n", line)
			}
		}
	}
	out.WriteString("ledger after:\n")
	_, lp := s.paths(t)
	data, _ := s.store.Mem().ReadFile(lp)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		rec, err := ledger.Decode([]byte(l))
		if err != nil {
			fmt.Fprintf(&out, "  (dropped) %s\n", l)
			continue
		}
		fmt.Fprintf(&out, "  %s\n", rec.Describe())
	}
	return out.String()
}
