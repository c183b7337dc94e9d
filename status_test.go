package tailproof

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"

	"github.com/tailproof/tailproof/projections/ownership"
)

// Status scenarios (testdata/status/*.txt) use the reconcile scenario
// notation for ledger and transcript (scenario_test.go), plus:
//
//	status [reference] [ledger] [auto] [turn] [harness] [stopped] [owner=<class>:<turn>...]
//	    prints RecoveryStatus.Describe; ledger passes the scenario ledger,
//	    auto sets AllowAutoContinue, owner adds live owners; turn prints
//	    only RecoveryStatus.Turn (the last prompt's `turn` object);
//	    harness prints the `turn` object `status --harness qwen --json`
//	    prints (QwenStatusTurn), stopped with --writer-stopped.
//	reconcile ...   as in the reconcile scenarios, to show both side by side.
func TestStatusScenarios(t *testing.T) {
	runScenarios(t, "testdata/status", map[string]scenarioCmd{"status": statusCmd})
}

func statusCmd(t *testing.T, s *scenario, d *datadriven.TestData) string {
	opts := StatusOptions{}
	turnOnly, harness, stopped := false, false, false
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "reference":
			opts.Reference = true
		case "ledger":
			opts.Ledger = s.store
		case "auto":
			opts.AllowAutoContinue = true
		case "turn":
			turnOnly = true
		case "harness":
			harness = true
		case "stopped":
			stopped = true
		case "owner":
			for _, v := range arg.Vals {
				cs, turn, _ := strings.Cut(v, ":")
				c, ok := ownership.ParseClass(cs)
				if !ok {
					t.Fatalf("bad owner %q", v)
				}
				opts.Owners = append(opts.Owners, ownership.Owner{Class: c, Turn: turn})
			}
		default:
			t.Fatalf("unknown status argument %q", arg.Key)
		}
	}
	st, err := Status(context.Background(), s.store, s.sid, opts)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	if harness {
		open := func(ctx context.Context) (io.ReadCloser, error) { return s.store.OpenTranscript(ctx, s.sid) }
		sum, err := QwenStatusTurn(context.Background(), st, open, opts.Ledger != nil, stopped)
		if err != nil {
			return fmt.Sprintf("error: %v\n", err)
		}
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	if turnOnly {
		return st.Turn.Describe()
	}
	return st.Describe()
}

// genSession draws a transcript in the scenario notation: real-user prompts
// with and without identities and provenance, envelope-shaped prompts,
// answers, tool calls (with and without ids) and results, cold, delivered
// and legacy notifications, cron prompts, and turn_results that complete or
// cancel. It returns the transcript and the prompt ids it used.
func genSession(t *rapid.T) (string, []string) {
	n := rapid.IntRange(1, 12).Draw(t, "records")
	var b strings.Builder
	// Sometimes a long settled prefix, so the tails are cut at the
	// classifier's 50-entry bound.
	if rapid.IntRange(0, 4).Draw(t, "long") == 0 {
		for i := 0; i < 30; i++ {
			fmt.Fprintf(&b, "h%d user \"q\"\nh%da assistant \"a\"\n", i, i)
		}
	}
	var prompts []string
	call := 0
	for i := 0; i < n; i++ {
		uuid := fmt.Sprintf("r%d", i)
		prov := rapid.SampledFrom([]string{"", "", " prov=none"}).Draw(t, "prov")
		switch rapid.IntRange(0, 10).Draw(t, "kind") {
		case 0, 1:
			daemon := ""
			if rapid.Bool().Draw(t, "identified") {
				id := fmt.Sprintf("p%d", len(prompts)+1)
				prompts = append(prompts, id)
				daemon = " daemon=" + id
			}
			text := rapid.SampledFrom([]string{"do it", "<task-notification><task-id>x</task-id></task-notification>"}).Draw(t, "text")
			fmt.Fprintf(&b, "%s user %q%s%s\n", uuid, text, daemon, prov)
		case 2:
			fmt.Fprintf(&b, "%s assistant \"done\"%s\n", uuid, prov)
		case 3:
			id := "-"
			if rapid.IntRange(0, 4).Draw(t, "idless") > 0 {
				call++
				id = fmt.Sprintf("call-%d", call)
			}
			fmt.Fprintf(&b, "%s fc %s%s\n", uuid, id, prov)
		case 4:
			fmt.Fprintf(&b, "%s fr call-%d%s\n", uuid, rapid.IntRange(1, call+1).Draw(t, "result-for"), prov)
		case 5, 6:
			delivered := rapid.SampledFrom([]string{"", " delivered"}).Draw(t, "delivered")
			fmt.Fprintf(&b, "%s notification%s%s\n", uuid, delivered, prov)
		case 7:
			fmt.Fprintf(&b, "%s cron \"tick\"%s\n", uuid, prov)
		case 8, 9:
			if len(prompts) == 0 {
				fmt.Fprintf(&b, "%s assistant \"ok\"\n", uuid)
				continue
			}
			id := rapid.SampledFrom(prompts).Draw(t, "result-prompt")
			state := rapid.SampledFrom([]string{"completed", "cancelled", "error"}).Draw(t, "state")
			fmt.Fprintf(&b, "%s turn_result %s %s\n", uuid, id, state)
		case 10:
			fmt.Fprintf(&b, "%s compression\n", uuid)
		}
	}
	return b.String(), prompts
}

// One classifier boundary: over generated sessions, whenever reconcile
// decides, status's plan kind (its tail kind, under degraded history) agrees:
// interrupted_prompt/turn ⇔ interrupted, clean ⇔ completed — in tailproof's
// rules and in the reference's. And whatever the session, a status never
// offers a cancelled turn, never resends a system-written part, and offers
// nothing the admission predicate would refuse.
func TestStatusAgreesWithReconcileProperty(t *testing.T) {
	decided := map[Verdict]int{}
	rapid.Check(t, func(rt *rapid.T) {
		s := &scenario{store: memory.NewQwenStore(), sid: scenarioSession}
		tr, prompts := genSession(rt)
		s.writeTranscript(t, tr, "1.0.0")
		target := fmt.Sprintf("p%d", len(prompts)+1)
		if len(prompts) > 0 && rapid.IntRange(0, 3).Draw(rt, "fresh-target") > 0 {
			target = rapid.SampledFrom(prompts).Draw(rt, "target")
		}
		s.writeLedger(t, "IF "+target+" at=1")
		for _, reference := range []bool{false, true} {
			res, err := Reconcile(context.Background(), s.store, s.sid, Options{Now: func() int64 { return 2e12 }, DryRun: true, Reference: reference})
			if err != nil {
				rt.Fatalf("reconcile: %v", err)
			}
			st, err := Status(context.Background(), s.store, s.sid, StatusOptions{Ledger: s.store, Reference: reference})
			if err != nil {
				rt.Fatalf("status: %v", err)
			}
			if st.Kind != PlanDegradedHistory && st.Kind != st.TailKind {
				rt.Fatalf("kind %s but tail kind %s", st.Kind, st.TailKind)
			}
			interrupted := st.TailKind == PlanInterruptedPrompt || st.TailKind == PlanInterruptedTurn
			d := res.Decisions[0] // one prompt dangles
			switch d.Verdict {
			case VerdictCompleted:
				decided[d.Verdict]++
				if st.TailKind != PlanClean {
					rt.Fatalf("reference=%t: reconcile completed, status %s\n%s\n%s", reference, st.TailKind, tr, st.Describe())
				}
			case VerdictInterrupted:
				decided[d.Verdict]++
				if !interrupted {
					rt.Fatalf("reference=%t: reconcile interrupted, status %s\n%s\n%s", reference, st.TailKind, tr, st.Describe())
				}
			}
			// A clean tail never hides the target: when reconcile cannot
			// prove the prompt completed, the status names it and a notice
			// is supported; when it can, the status says the turn settled.
			if st.Kind == PlanClean && !st.Cancelled && st.SettledBy == "" {
				named := st.Support.Notice.Supported && (strings.Contains(st.Reason, "prompt "+target+" ") || strings.Contains(st.Reason, "prompt "+target+","))
				switch d.Verdict {
				case VerdictCompleted:
					if named {
						rt.Fatalf("reference=%t: reconcile completed, status says otherwise: %s", reference, st.Reason)
					}
				case VerdictUnknown, VerdictInterrupted:
					decided["clean-"+d.Verdict]++
					if !named || strings.HasPrefix(st.Reason, "the last turn settled") {
						rt.Fatalf("reference=%t: reconcile %s, status hides %s: %s\n%s", reference, d.Verdict, target, st.Reason, tr)
					}
				}
			}
			// The turn object is the one dangling prompt, with reconcile's
			// verdict (cancelled and error are interrupted there), and
			// resends only real-user text.
			tv := map[Verdict]string{VerdictCompleted: "completed", VerdictInterrupted: "interrupted",
				VerdictCancelled: "interrupted", VerdictError: "interrupted", VerdictUnknown: "unknown"}[d.Verdict]
			if st.Turn == nil || st.Turn.Prompt != target || st.Turn.Verdict != tv {
				rt.Fatalf("reference=%t: reconcile %s for %s, turn:\n%s", reference, d.Verdict, target, st.Turn.Describe())
			}
			for _, p := range st.Turn.Resend {
				if p.Source.Provenance != events.ProvenanceRealUser || p.Part.Kind != qwen.PartText || len(p.Part.Raw) == 0 {
					rt.Fatalf("turn resends a part that is not real-user text: %s", st.Turn.Describe())
				}
			}
			if len(st.Turn.Resend) > 0 && st.Turn.Verdict != "interrupted" {
				rt.Fatalf("turn resends for a %s prompt", st.Turn.Verdict)
			}
			if st.Cancelled && st.CanContinue {
				rt.Fatalf("a cancelled turn is offered:\n%s", st.Describe())
			}
			if st.CanContinue && st.Kind == PlanDegradedHistory {
				rt.Fatalf("degraded history offered")
			}
			for _, p := range st.Resend {
				if p.Source.Provenance.IsSystemLike() || p.Source.Subtype == "notification" || p.Source.Subtype == "cron" {
					rt.Fatalf("resends a system-written part from %s:\n%s", p.Source.UUID, st.Describe())
				}
			}
			st2, err := Status(context.Background(), s.store, s.sid, StatusOptions{Ledger: s.store, Reference: reference,
				Owners: []ownership.Owner{{Class: ownership.Cron, Turn: "j"}}})
			if err != nil || st2.CanContinue || st2.Support.Offer.Supported || st2.Support.AutoExecute.Supported {
				rt.Fatalf("owned session offered a continuation (%v):\n%s", err, st2.Describe())
			}
		}
	})
	// The property must not pass vacuously: both verdicts were decided.
	if decided[VerdictCompleted] == 0 || decided[VerdictInterrupted] == 0 {
		t.Fatalf("generator never reached a decided verdict: %v", decided)
	}
	t.Logf("decided: %v", decided)
}

// FuzzStatus: any transcript and ledger bytes give a status or a classified
// error, never a panic, and the invariants hold whatever the input.
func FuzzStatus(f *testing.F) {
	line := func(uuid, parent, body string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z",` + body + "}\n"
	}
	user := `"type":"user","provenance":"real_user","daemonPromptId":"p1","message":{"role":"user","parts":[{"text":"hi"}]}`
	fc := `"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"x","args":{}}}]}`
	note := `"type":"user","subtype":"notification","provenance":"system","message":{"role":"user","parts":[{"text":"<task-notification>x</task-notification>"}]}`
	tr := `"type":"system","subtype":"turn_result","provenance":"system","systemPayload":{"promptId":"p1","state":"cancelled","endedAt":1,"cancelledAt":1}`
	f.Add(line("u1", "", user), `{"v":1,"promptId":"p1","state":"in_flight","at":1}`+"\n")
	f.Add(line("u1", "", user)+line("a1", "u1", fc), "")
	f.Add(line("u1", "", user)+line("n1", "u1", note), "")
	f.Add(line("u1", "", user)+line("x1", "u1", tr), "")
	f.Add(line("u1", "", user)+line("a1", "zz", fc)+`{"uuid":"t`, "garbage\n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, transcript, ledgerText string) {
		store := memory.NewQwenStore()
		s := &scenario{store: store, sid: scenarioSession}
		tp, lp := s.paths(t)
		if err := store.Mem().WriteFile(tp, []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := store.Mem().WriteFile(lp, []byte(ledgerText), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []bool{false, true} {
			st, err := Status(context.Background(), store, s.sid, StatusOptions{Ledger: store, Reference: ref})
			if err != nil {
				if !errors.Is(err, ErrNoTranscript) && !errors.Is(err, ErrUnreadableLedger) {
					t.Fatalf("unclassified error: %v", err)
				}
				continue
			}
			_ = st.Describe()
			_ = st.Turn.Describe()
			if sum := StatusSummary(st); sum != nil && (sum.Verdict != "completed" && sum.Verdict != "interrupted" && sum.Verdict != "unknown" ||
				sum.Verdict == "unknown" && len(sum.Vetoes) == 0 || sum.Verdict != "unknown" && sum.Because == "") {
				t.Fatalf("turn %+v", sum)
			}
			if transcript == "" && st.Transcript != TranscriptEmpty || transcript != "" && st.Transcript == TranscriptMissing {
				t.Fatalf("transcript state %s for %d bytes", st.Transcript, len(transcript))
			}
			if st.Cancelled && st.CanContinue || st.Kind == PlanDegradedHistory && st.CanContinue {
				t.Fatalf("offered what must not be offered:\n%s", st.Describe())
			}
			if st.Support.AutoExecute.Supported && !st.Support.Offer.Supported {
				t.Fatalf("auto-execute without offer:\n%s", st.Describe())
			}
			for _, p := range st.Resend {
				if p.Source.Provenance.IsSystemLike() {
					t.Fatalf("resends a system part:\n%s", st.Describe())
				}
			}
		}
	})
}

// A session whose process died after the user's prompt was written and
// before the model answered; a cron turn is running right now.
func ExampleStatus() {
	store := memory.NewQwenStore()
	sid := "00000000-0000-4000-8000-000000000002"
	path, _ := store.Layout().TranscriptPath(sid, jsonl.Active)
	_ = store.Mem().WriteFile(path, []byte(
		`{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"run the tests"}]}}`+"\n"), 0o600)

	st, err := Status(context.Background(), store, sid, StatusOptions{
		Owners: []ownership.Owner{{Class: ownership.Cron, Turn: "nightly"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Kind, string(st.Resend[0].Part.Raw))
	fmt.Println("notice:", st.Support.Notice.Supported)
	fmt.Println("offer:", st.Support.Offer.Supported, "-", st.Support.Offer.Reason)
	fmt.Println("auto-execute:", st.Support.AutoExecute.Supported)
	// Output:
	// interrupted_prompt {"text":"run the tests"}
	// notice: true
	// offer: false - no-active-turn: the session is owned by cron_turn nightly
	// auto-execute: false
}

// BenchmarkStatus: a transcript of 2,000 turns, each with a 16 KiB tool
// output, ending in an unanswered prompt. The walk keeps no payloads; the
// printed parts' records are read back for their exact bytes.
func BenchmarkStatus(b *testing.B) {
	store := memory.NewQwenStore()
	sid := "00000000-0000-4000-8000-000000000003"
	path, _ := store.Layout().TranscriptPath(sid, jsonl.Active)
	out := strings.Repeat("x", 16<<10)
	var buf strings.Builder
	prev := "null"
	rec := func(uuid, body string) {
		fmt.Fprintf(&buf, `{"uuid":%q,"parentUuid":%s,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z",%s}`+"\n", uuid, prev, body)
		prev = `"` + uuid + `"`
	}
	for i := 0; i < 2000; i++ {
		rec(fmt.Sprintf("u%d", i), `"type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"go"}]}`)
		rec(fmt.Sprintf("a%d", i), fmt.Sprintf(`"type":"assistant","provenance":"assistant_output","message":{"role":"model","parts":[{"functionCall":{"id":"c%d","name":"sh","args":{}}}]}`, i))
		rec(fmt.Sprintf("r%d", i), fmt.Sprintf(`"type":"tool_result","provenance":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c%d","name":"sh","response":{"output":%q}}}]}`, i, out))
		rec(fmt.Sprintf("m%d", i), `"type":"assistant","provenance":"assistant_output","message":{"role":"model","parts":[{"text":"done"}]}`)
	}
	rec("last", `"type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"and now?"}]}`)
	if err := store.Mem().WriteFile(path, []byte(buf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		st, err := Status(context.Background(), store, sid, StatusOptions{})
		if err != nil || st.Kind != PlanInterruptedPrompt {
			b.Fatalf("%v %s", err, st.Kind)
		}
	}
}
