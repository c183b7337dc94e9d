package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/guards"
)

var (
	runs = flag.Int("conformance.runs", 2000, "scenarios TestConformance generates")
	seed = flag.Uint64("conformance.seed", 1, "seed of TestConformance's scenarios")
	save = flag.String("conformance.save", "", "save failing scenarios under this directory")
)

// TestConformance runs generated crash scenarios through the real Qwen Code
// 0.24.4 reconciler and through tailproof. Reference mode must agree exactly;
// every default-mode disagreement must be a deliberate difference.
func TestConformance(t *testing.T) {
	n := *runs
	if testing.Short() {
		n = min(n, 200)
	}
	rep, err := Run(context.Background(), Config{Runs: n, Seed: *seed})
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("reference not available: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if *save != "" {
		for _, o := range rep.Failures {
			d, err := o.Save(*save)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("saved %s", d)
		}
	}
	if !rep.OK() {
		t.Errorf("%d reference-mode disagreements, %d unclassified default-mode disagreements (scenarios above; -conformance.save=DIR writes them as files)",
			rep.RefMismatch, rep.Unclassified)
	}
}

// TestSavedDisagreements replays every saved reference-mode disagreement.
// An open one must still be exactly its known bug; a fixed one is logged so
// it can be turned into a scenario test.
func TestSavedDisagreements(t *testing.T) {
	dirs, err := filepath.Glob("testdata/disagreements/*/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Skip("no saved disagreements")
	}
	scratch := t.TempDir()
	node, err := StartNode(context.Background(), scratch)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("reference not available: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	for _, meta := range dirs {
		dir := filepath.Dir(meta)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, err := LoadSaved(dir)
			if err != nil {
				t.Fatal(err)
			}
			var m struct{ Known string }
			b, _ := os.ReadFile(meta)
			_ = json.Unmarshal(b, &m)
			js, err := node.Run([]Scenario{s})
			if err != nil {
				t.Fatal(err)
			}
			o := Compare(context.Background(), scratch, s, js[0])
			switch {
			case o.RefMismatch == "":
				t.Logf("%s now agrees with the reference: move it into a scenario test and delete %s and its KnownMismatches entry", s.ID, dir)
			case o.Known != m.Known || m.Known == "":
				t.Errorf("%s disagrees as %q, saved as known %q:\n%s", s.ID, o.Known, m.Known, o.Describe())
			default:
				t.Logf("%s: known %s still open: %s", s.ID, o.Known, KnownMismatches[o.Known])
			}
		})
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		i := rapid.IntRange(0, 1<<20).Draw(t, "i")
		a, b := Generate(seed, i), Generate(seed, i)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("Generate(%d, %d) differs between calls:\n%s", seed, i, diff)
		}
		if err := jsonl.CheckSessionID(a.SessionID); err != nil {
			t.Fatalf("session id %q: %v", a.SessionID, err)
		}
		if !strings.HasPrefix(a.Cwd, "/") {
			t.Fatalf("cwd %q is not absolute", a.Cwd)
		}
		for _, l := range strings.Split(strings.TrimRight(a.Ledger, "\n"), "\n") {
			if !utf8.ValidString(l) {
				t.Fatalf("ledger line is not UTF-8: %q", l)
			}
		}
	})
}

func TestGenerateCoversTheFeatures(t *testing.T) {
	seen := map[string]bool{}
	for i := range 3000 {
		for _, f := range Generate(7, i).Features {
			seen[f] = true
		}
	}
	for _, want := range []string{
		"daemonPromptId", "tailUuid", "terminal-cancelled", "terminal-error", "terminal-deadline", "idless-functionCall",
		"notification", "compression", "custom_title", "slash-command", "equal-timestamp", "backward-timestamp",
		"transcript-missing", "transcript-torn-tail", "ledger-torn-tail", "ledger-malformed", "goal-turn", "turn_result",
		"no-provenance", "several-dangling", "foreign-user", "notification-shaped-prompt", "transcript-corrupt-line",
		"tr-fragments", "never-wrote", "tr-crlf", "led-crlf", "tr-odd-timestamp", "led-odd-at", "tr-first-record-colliding-cwd",
	} {
		if !seen[want] {
			t.Errorf("3000 scenarios never generated %q", want)
		}
	}
}

func TestNormalizeAt(t *testing.T) {
	for in, want := range map[string]string{
		`{"v":1,"promptId":"p","terminal":"completed","stopReason":"reconstructed_from_transcript","at":1796010456689}`: `{"v":1,"promptId":"p","terminal":"completed","stopReason":"reconstructed_from_transcript","at":0}`,
		`{"v":1,"promptId":"p","terminal":"interrupted","code":"daemon_lost","at":1.5e12}`:                              `{"v":1,"promptId":"p","terminal":"interrupted","code":"daemon_lost","at":0}`,
		`{"at":1,"x":2}`: `{"at":1,"x":2}`,
	} {
		if got := normalizeAt(in); got != want {
			t.Errorf("normalizeAt(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestFirstRecordCwd(t *testing.T) {
	for _, c := range []struct {
		in   string
		cwd  string
		okay bool
	}{
		{"{\"cwd\":\"/a\"}\n{\"cwd\":\"/b\"}\n", "/a", true},
		{"\ufeff  {\"cwd\":\"/a\"}\r\n", "/a", true},
		{"null\n[1]\n{\"cwd\":\"/b\"}\n", "/b", true},
		{"{\"uuid\":\"x\"}\n{\"cwd\":\"/b\"}\n", "", false},
		{"{\"uuid\":\"x\"}}\n{\"cwd\":\"/b\"}\n", "", false},
		{"x{\"cwd\":\"/a}{\"}{\"cwd\":\"/c\"}\n", "/a}{", true},
		{"", "", false},
	} {
		cwd, ok := firstRecordCwd(c.in)
		if cwd != c.cwd || ok != c.okay {
			t.Errorf("firstRecordCwd(%q) = %q, %v; want %q, %v", c.in, cwd, ok, c.cwd, c.okay)
		}
	}
	if !worktreeOf("/w/.qwen/worktrees/x", "/w") || worktreeOf("/v/.qwen/worktrees/x", "/w") {
		t.Error("worktreeOf")
	}
}

func TestSplitKeepRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[a\n\r{}]{0,20}`).Draw(t, "s")
		lines := splitKeep(s)
		if strings.Join(lines, "") != s {
			t.Fatalf("splitKeep(%q) = %q", s, lines)
		}
		for i := range lines {
			if got := without(lines, i); len(got) != len(s)-len(lines[i]) {
				t.Fatalf("without(%q, %d) = %q", lines, i, got)
			}
		}
	})
}

// TestClassify checks the classifier on hand-made decisions: each
// deliberate difference is recognised from its guard and evidence, and a
// veto no rule explains stays unclassified.
func TestClassify(t *testing.T) {
	ev := func(f func(e *guards.Evidence)) *guards.Evidence {
		e := &guards.Evidence{}
		e.Transcript.Loaded = true
		e.Transcript.BackgroundIdx = -1
		e.Transcript.Ownership.TargetIdx = -1
		e.Classification.Done = true
		if f != nil {
			f(e)
		}
		return e
	}
	appended := tailproof.Decision{Verdict: tailproof.VerdictInterrupted, Appended: &ledger.Record{}, Line: []byte(`{"at":1}`), Evidence: ev(nil)}
	veto := func(name string, f func(e *guards.Evidence)) tailproof.Decision {
		return tailproof.Decision{Verdict: tailproof.VerdictUnknown, Vetoes: []guards.Veto{{Guard: name, Reason: "r"}}, Evidence: ev(f)}
	}
	for _, c := range []struct {
		name     string
		ref, def tailproof.Decision
		want     string
	}{
		{"bad line", appended, veto("transcript-integrity", func(e *guards.Evidence) { e.Transcript.BadLines = []string{"line 3"} }), CatIntegrity},
		{"gap", appended, veto("transcript-integrity", func(e *guards.Evidence) { e.Transcript.Degraded = "history gap" }), CatChainDegraded},
		{"integrity without evidence", appended, veto("transcript-integrity", nil), ""},
		{"system provenance", appended, veto("system-provenance", nil), CatSystemProvenance},
		{"ownership veto", appended, veto("ownership", func(e *guards.Evidence) { e.Transcript.Ownership.Active = true }), CatOwnership},
		{"ownership veto without identities", appended, veto("ownership", nil), ""},
		{"identified turn skips temporal", veto("temporal", nil), func() tailproof.Decision {
			d := appended
			d.Evidence = ev(func(e *guards.Evidence) {
				e.Transcript.Ownership = guards.OwnershipEvidence{Active: true, TargetIdx: 3}
			})
			return d
		}(), CatOwnership},
		{"identified turn does not excuse a deadline", veto("deadline", nil), func() tailproof.Decision {
			d := appended
			d.Evidence = ev(func(e *guards.Evidence) {
				e.Transcript.Ownership = guards.OwnershipEvidence{Active: true, TargetIdx: 3}
			})
			return d
		}(), ""},
		{"shape guess", appended, veto("shape-guess", nil), CatNotificationTrim},
		{"background turn", appended, veto("background-turn", func(e *guards.Evidence) { e.Transcript.BackgroundIdx = 4 }), CatBackgroundTurn},
		{"tail classified apart", appended, func() tailproof.Decision {
			return tailproof.Decision{Verdict: tailproof.VerdictCompleted, Appended: &ledger.Record{}, Line: []byte(`{"at":2}`),
				Evidence: ev(func(e *guards.Evidence) { e.Classification.Kind = "none" })}
		}(), CatNotificationTrim},
		{"an unexplained veto", appended, veto("temporal", nil), ""},
		{"tail classified apart without any notification", appended, func() tailproof.Decision {
			return tailproof.Decision{Verdict: tailproof.VerdictCompleted, Appended: &ledger.Record{}, Line: []byte(`{"at":2}`),
				Evidence: ev(func(e *guards.Evidence) { e.Classification.Kind = "none" })}
		}(), "no-notification"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.ref.Evidence.Classification.Kind == "" && c.ref.Appended != nil {
				c.ref.Evidence.Classification.Kind, c.ref.Evidence.Classification.Interrupted = "interrupted_prompt", true
			}
			tr := `{"text":"<task-notification>"}`
			got, why := classify(&Outcome{Ref: c.ref, Def: c.def, Scenario: Scenario{Transcript: &tr}})
			if c.want == "no-notification" {
				plain := `{"text":"hi"}`
				got, why = classify(&Outcome{Ref: c.ref, Def: c.def, Scenario: Scenario{Transcript: &plain}})
				c.want = ""
			}
			if got != c.want {
				t.Errorf("classify = %q (%s), want %q", got, why, c.want)
			}
		})
	}
}

func FuzzParseJSResult(f *testing.F) {
	f.Add([]byte(`{"id":"a","appended":null,"sealed":false,"ledgerPath":"p","transcriptPath":"q"}`))
	f.Add([]byte(`{"id":"a","appended":{"v":1,"promptId":"p","terminal":"completed","at":1},"line":"{}","sealed":true}`))
	f.Add([]byte(`{"id":"a","appended":{"v":1}}`))
	f.Add([]byte(`{"id":"","error":"x"}`))
	f.Add([]byte(`{"id":"a"} {"id":"b"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseJSResult(line)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "conformance: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		if r.ID == "" || (r.Appended != nil && r.Line == "") {
			t.Fatalf("accepted an unusable result %+v", r)
		}
	})
}
