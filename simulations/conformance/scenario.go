package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Scenario is one crash-shaped session: the raw bytes of a prompt terminal
// ledger and of a transcript, as both implementations will find them on
// disk. It is also the JSONL line the node side reads.
type Scenario struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Ledger    string `json:"ledger"`
	// Transcript is nil when the session has no transcript file.
	Transcript *string `json:"transcript"`
	// Features name what the generator put in, for the report.
	Features []string `json:"-"`
}

// recordBaseMs is Date.UTC(2026,0,1), the reference tests' RECORD_BASE_MS.
const recordBaseMs int64 = 1767225600000

// NotificationText is a background-task notification envelope, the content
// shape the reference trims from the classifiable tail.
const NotificationText = `<task-notification><task-id>agent-1</task-id><status>completed</status><summary>Agent "explore" completed.</summary></task-notification>`

// record is a Qwen ChatRecord as the transcript stores it; field order
// follows Qwen's writer so the files read like real ones.
type record struct {
	// BackgroundTurn is Qwen Code 0.24.4's stamp on every record of a
	// background notification turn; createBaseRecord writes it first.
	BackgroundTurn map[string]any `json:"backgroundTurn,omitempty"`
	UUID           string         `json:"uuid"`
	ParentUUID     *string        `json:"parentUuid"`
	SessionID      string         `json:"sessionId"`
	Timestamp      string         `json:"timestamp"`
	Type           string         `json:"type"`
	Subtype        string         `json:"subtype,omitempty"`
	Cwd            string         `json:"cwd"`
	Version        string         `json:"version"`
	Provenance     string         `json:"provenance,omitempty"`
	DaemonPromptID string         `json:"daemonPromptId,omitempty"`
	Message        *message       `json:"message,omitempty"`
	SystemPayload  map[string]any `json:"systemPayload,omitempty"`
	GoalContext    map[string]any `json:"goalContext,omitempty"`
}

type message struct {
	Role  string `json:"role"`
	Parts []any  `json:"parts"`
}

func text(s string) map[string]any { return map[string]any{"text": s} }

// Generate returns scenario i of the run seeded with seed. The same (seed, i)
// always yields the same scenario, so a failure is reproducible from its id.
func Generate(seed uint64, i int) Scenario {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
	return g.scenario(fmt.Sprintf("s%d-%d", seed, i))
}

type gen struct {
	r        *rand.Rand
	sid, cwd string
	clock    int64
	lines    []string // transcript lines
	uuids    []string // uuids written, in order
	tail     string   // the uuid the next record chains to
	n        int
	identity bool // user records carry daemonPromptId
	ledger   []string
	features map[string]bool
}

func (g *gen) p(x float64) bool { return g.r.Float64() < x }

func (g *gen) feature(f string) { g.features[f] = true }

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// step advances the clock the way real writes do, with the equal and
// backward steps (NTP corrections, same-millisecond writes) the temporal
// rules are sensitive to.
func (g *gen) step() {
	switch x := g.r.IntN(100); {
	case x < 8:
		g.feature("equal-timestamp")
	case x < 13:
		g.clock -= int64(1 + g.r.IntN(3000))
		g.feature("backward-timestamp")
	case x < 25:
		g.clock += int64(1 + g.r.IntN(5))
	default:
		g.clock += int64(200 + g.r.IntN(4000))
	}
}

func (g *gen) timestamp() string {
	t := time.UnixMilli(g.clock).UTC()
	switch x := g.r.IntN(100); {
	case x < 3:
		g.feature("timestamp-no-millis")
		return t.Format("2006-01-02T15:04:05Z")
	case x < 5:
		g.feature("timestamp-offset")
		return t.Format("2006-01-02T15:04:05.000+00:00")
	case x < 6:
		g.feature("timestamp-invalid")
		return "not a time"
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func (g *gen) newUUID() string {
	g.n++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", g.r.Uint32(), g.n)
}

// add appends rec to the transcript, chained to the current tail (or, now
// and then, to an older record — a rewind fork — or to a missing parent).
func (g *gen) add(rec record) string {
	rec.UUID = g.newUUID()
	rec.SessionID, rec.Cwd, rec.Version = g.sid, g.cwd, "0.24.4"
	g.step()
	rec.Timestamp = g.timestamp()
	parent := g.tail
	switch {
	case len(g.uuids) > 2 && g.p(0.02):
		parent = g.uuids[g.r.IntN(len(g.uuids)-1)]
		g.feature("fork")
	case len(g.uuids) > 0 && g.p(0.01):
		parent = "ffffffff-dead-4000-8000-000000000000"
		g.feature("missing-parent")
	}
	if parent != "" {
		rec.ParentUUID = &parent
	}
	b, err := json.Marshal(rec)
	if err != nil {
		panic("conformance: generated record does not marshal: " + err.Error())
	}
	g.lines = append(g.lines, string(b))
	g.uuids = append(g.uuids, rec.UUID)
	g.tail = rec.UUID
	return rec.UUID
}

func (g *gen) provenance(def string) string {
	switch x := g.r.IntN(100); {
	case x < 10:
		g.feature("no-provenance")
		return ""
	case x < 13 && def != "system":
		g.feature("odd-provenance")
		return "system"
	}
	return def
}

func (g *gen) user(s, prompt string) {
	rec := record{Type: "user", Provenance: g.provenance("real_user"), Message: &message{Role: "user", Parts: []any{text(s)}}}
	if g.identity && prompt != "" {
		rec.DaemonPromptID = prompt
	}
	g.add(rec)
}

func (g *gen) assistant(prompt string) {
	rec := record{Type: "assistant", Provenance: g.provenance("assistant_output"), Message: &message{Role: "model", Parts: []any{text("done")}}}
	if g.identity && prompt != "" && g.p(0.5) {
		rec.DaemonPromptID = prompt
	}
	g.add(rec)
}

func (g *gen) functionCall(id, name string) {
	fc := map[string]any{"name": name, "args": map[string]any{}}
	if id != "" {
		fc["id"] = id
	} else {
		g.feature("idless-functionCall")
	}
	g.add(record{Type: "assistant", Provenance: g.provenance("assistant_output"),
		Message: &message{Role: "model", Parts: []any{map[string]any{"functionCall": fc}}}})
}

func (g *gen) functionResponse(id, name string) {
	fr := map[string]any{"name": name, "response": map[string]any{"output": "ok"}}
	if id != "" {
		fr["id"] = id
	}
	g.add(record{Type: "tool_result", Provenance: g.provenance("tool_result"),
		Message: &message{Role: "user", Parts: []any{map[string]any{"functionResponse": fr}}}})
}

func (g *gen) system(subtype string, payload map[string]any, prov string) {
	g.add(record{Type: "system", Subtype: subtype, Provenance: prov, SystemPayload: payload})
}

func (g *gen) notification() {
	g.feature("notification")
	g.add(record{Type: "user", Subtype: "notification", Provenance: g.provenance("system"),
		Message: &message{Role: "user", Parts: []any{text(NotificationText)}}})
}

// stampedTurn writes a background notification turn as 0.24.4 does: the
// unstamped background_task_completed record, then the notification and the
// model's answer, each stamped backgroundTurn. The reference ignores the
// stamp; its rules must read these files exactly as 0.24.4 does.
func (g *gen) stampedTurn() {
	g.feature("stamped-background-turn")
	g.system("background_task_completed", map[string]any{"displayText": "Agent done.",
		"backgroundTask": map[string]any{"taskId": "agent-1", "status": "completed", "kind": "agent"}}, "system")
	stamp := map[string]any{"turnId": g.sid + "########notification" + g.newUUID(), "taskId": "agent-1",
		"kind": "agent", "startedAt": g.clock}
	g.add(record{BackgroundTurn: stamp, Type: "user", Subtype: "notification", Provenance: "system",
		Message: &message{Role: "user", Parts: []any{text(NotificationText)}}})
	if g.p(0.7) {
		g.add(record{BackgroundTurn: stamp, Type: "assistant", Provenance: "assistant_output",
			Message: &message{Role: "model", Parts: []any{text("background answer")}}})
	}
}

func (g *gen) cron() {
	g.feature("cron")
	g.add(record{Type: "user", Subtype: "cron", Provenance: "system",
		Message: &message{Role: "user", Parts: []any{text("scheduled check")}}})
}

func (g *gen) compression() {
	g.feature("compression")
	g.system("chat_compression", map[string]any{
		"info":              map[string]any{"originalTokenCount": 100, "newTokenCount": 50, "compressionStatus": 1},
		"compressedHistory": []any{map[string]any{"role": "user", "parts": []any{text("summary")}}},
	}, "system")
}

func (g *gen) title() {
	g.feature("custom_title")
	g.system("custom_title", map[string]any{"customTitle": "Later title", "titleSource": "manual"}, "")
}

// turn writes a prompt's turn: its user record and what the model did, cut
// short when crash is set.
func (g *gen) turn(prompt string, crash bool) {
	call := 0
	if crash && g.p(0.08) {
		// Queued, admitted, and killed before its user record was written;
		// the host may still deliver a notification afterwards.
		g.feature("never-wrote")
		if g.p(0.6) {
			g.notification()
		}
		return
	}
	switch x := g.r.IntN(100); {
	case x < 12:
		cmd := g.pick("/help", "/stats", "/about")
		g.user(cmd, prompt)
		if !crash || g.p(0.6) {
			g.feature("slash-command")
			payload := map[string]any{"phase": "result", "rawCommand": cmd,
				"outputHistoryItems": []any{map[string]any{"type": "assistant", "text": "Done."}}}
			switch y := g.r.IntN(10); {
			case y == 0:
				payload["sentToModel"] = true
			case y == 1:
				payload["rawCommand"] = "/other"
			case y == 2:
				payload["outputHistoryItems"] = []any{map[string]any{"type": "info", "text": "x"}}
			}
			g.system("slash_command", payload, "system")
		}
		return
	case x < 18:
		g.feature("notification-shaped-prompt")
		g.user(NotificationText, prompt)
	default:
		g.user(g.pick("fix the bug", "run the tests", "explain this"), prompt)
	}
	steps := g.r.IntN(5)
	if crash {
		steps = g.r.IntN(4)
	}
	for s := 0; s < steps; s++ {
		switch x := g.r.IntN(100); {
		case x < 30:
			call++
			id := fmt.Sprintf("call-%s-%d", prompt, call)
			if g.p(0.2) {
				id = ""
			}
			g.functionCall(id, "run_shell_command")
			if !(crash && s == steps-1 && g.p(0.5)) {
				rid := id
				if id == "" && g.p(0.5) {
					rid = fmt.Sprintf("call-%s-%d", prompt, call)
				}
				g.functionResponse(rid, "run_shell_command")
			}
		case x < 55:
			g.assistant(prompt)
		case x < 60:
			g.notification()
		case x < 63:
			g.stampedTurn()
		case x < 68:
			g.compression()
		case x < 72:
			g.title()
		case x < 77:
			g.feature("goal-turn")
			call++
			id := fmt.Sprintf("goal-call-%d", call)
			g.system("goal_turn_end", map[string]any{"toolCallId": id}, "system")
		case x < 80:
			g.cron()
		case x < 82:
			g.feature("realtime_message")
			g.add(record{Type: "assistant", Subtype: "realtime_message", Provenance: "assistant_output",
				Message: &message{Role: "model", Parts: []any{text("partial")}}})
		default:
			g.assistant(prompt)
		}
	}
	if !crash && g.p(0.7) {
		g.assistant(prompt)
	}
}

func (g *gen) scenario(id string) Scenario {
	g.features = map[string]bool{}
	g.sid = fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", g.r.Uint32(), g.r.IntN(1<<16), g.r.IntN(1<<12), g.r.IntN(1<<12), g.r.Uint64()&(1<<48-1))
	g.cwd = g.pick("/work/project", "/home/u/repo", "/srv/app-1", "/work/project", "/home/u/repo", "/srv/app-1",
		"/home/u/my project", "/tmp/a.b_c", "/home/ü/projet", "/home/u/😀x")
	g.clock = recordBaseMs + int64(g.r.IntN(100000))
	g.identity = g.p(0.35)
	if g.identity {
		g.feature("daemonPromptId")
	}

	// A conversation before the daemon's prompts: an interactive session.
	if g.p(0.3) {
		g.feature("prior-history")
		g.turn("", false)
	}
	prompts := 1 + g.r.IntN(3)
	for i := 0; i < prompts; i++ {
		prompt := fmt.Sprintf("prompt-%d-%04x", i+1, g.r.IntN(1<<16))
		last := i == prompts-1
		g.inFlight(prompt)
		settle := !last || g.p(0.1)
		if !last && g.p(0.08) {
			settle = false
			g.feature("several-dangling")
		}
		g.turn(prompt, !settle)
		if settle {
			g.terminal(prompt)
		}
		// Writers the ledger does not know about.
		switch x := g.r.IntN(100); {
		case x < 6:
			g.feature("foreign-user")
			g.user("typed in the terminal", "")
			if g.p(0.5) {
				g.assistant("")
			}
		case x < 12:
			g.notification()
		case x < 15:
			g.title()
		}
	}

	g.noiseLedger()
	ledgerLines, crlf, loneCR, bom := g.ledger, false, false, false
	if g.p(0.25) {
		ledgerLines, crlf, loneCR, bom = g.perturb(ledgerPerturbations, ledgerLines)
	}
	s := Scenario{ID: id, SessionID: g.sid, Cwd: g.cwd, Ledger: g.join(ledgerLines, crlf, loneCR, bom)}
	if g.p(0.05) {
		s.Ledger = strings.TrimSuffix(s.Ledger, "\n")
		g.feature("ledger-unterminated")
	}
	if g.p(0.06) {
		g.feature("ledger-torn-tail")
		s.Ledger += `{"v":1,"promptId":"prompt-x","sta`
	}
	if t, ok := g.transcript(); ok {
		s.Transcript = &t
	}
	for f := range g.features {
		s.Features = append(s.Features, f)
	}
	slices.Sort(s.Features)
	return s
}

// noiseLedger inserts lines the reference drops.
func (g *gen) noiseLedger() {
	if !g.p(0.2) {
		return
	}
	g.feature("ledger-malformed")
	bad := []string{
		`not json`,
		`{"v":2,"promptId":"p-x","state":"in_flight","at":1}`,
		`{"v":1,"promptId":"p-x","state":"in_flight","at":"1"}`,
		`{"v":1,"promptId":7,"terminal":"completed","at":1}`,
		`{"v":1,"promptId":"p-x","terminal":"done","at":1}`,
		`[1,2,3]`,
		`null`,
		`{"v":1,"promptId":"p-x","state":"in_flight","at":1e400}`,
		``,
	}
	line := bad[g.r.IntN(len(bad))]
	at := g.r.IntN(len(g.ledger) + 1)
	g.ledger = append(g.ledger[:at], append([]string{line}, g.ledger[at:]...)...)
}

func (g *gen) transcript() (string, bool) {
	switch x := g.r.IntN(100); {
	case x < 4:
		g.feature("transcript-missing")
		return "", false
	case x < 5:
		g.feature("transcript-empty")
		return "", true
	}
	lines := g.lines
	if len(lines) > 2 && g.p(0.05) {
		g.feature("transcript-corrupt-line")
		i := g.r.IntN(len(lines) - 1)
		lines = append(append(append([]string{}, lines[:i]...), `{"uuid":"broken`), lines[i:]...)
	}
	if len(lines) > 2 && g.p(0.04) {
		// Two records on one line: a writer lost a newline; the reference
		// recovers both with its `}{` split.
		g.feature("transcript-glued-records")
		i := 1 + g.r.IntN(len(lines)-1)
		glued := lines[i-1] + lines[i]
		lines = append(append(append([]string{}, lines[:i-1]...), glued), lines[i+1:]...)
	}
	crlf, loneCR, bom := false, false, false
	if g.p(0.35) {
		lines, crlf, loneCR, bom = g.perturb(transcriptPerturbations, lines)
	}
	out := g.join(lines, crlf, loneCR, bom)
	if g.p(0.07) {
		g.feature("transcript-torn-tail")
		if len(lines) > 0 && g.p(0.5) {
			// The last record itself was cut mid-write.
			last := lines[len(lines)-1]
			out = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r"), last) + last[:len(last)/2]
		} else {
			out += `{"uuid":"ab12`
		}
	}
	return out, true
}
