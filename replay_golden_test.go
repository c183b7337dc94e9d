package tailproof_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/projections/timeline"
)

// ReplayDivergence is the one stable code every golden-replay divergence is
// reported under, whatever its kind, so CI logs and tooling can grep for it.
const ReplayDivergence = "TP-REPLAY-DIVERGENCE"

// goldenDir holds recorded sessions in Qwen's runtime layout; each session
// <id> has its expected decisions in testdata/replay/<id>.golden.
var goldenDir = filepath.Join("testdata", "replay")

// goldenRow is what recovery decides had the process died right after
// merged event Pos (0: before any event; the last row is the recording as
// it stands).
type goldenRow struct {
	Pos     int
	Verdict string
	Target  string
	Vetoes  string // guard names, comma separated; "" when none
}

func (r goldenRow) String() string {
	s := fmt.Sprintf("%d %s %s", r.Pos, r.Verdict, orDash(r.Target))
	if r.Vetoes != "" {
		s += " " + r.Vetoes
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// divergence is one difference between a golden and a replay, positioned
// like Temporal's replayer reports a non-deterministic history.
type divergence struct {
	Kind string // missing | extra | mismatch
	Pos  int
	Want string
	Got  string
}

func (d divergence) String() string {
	switch d.Kind {
	case "missing":
		return fmt.Sprintf("%s: missing at crash position %d: want %q, the replay has no such position", ReplayDivergence, d.Pos, d.Want)
	case "extra":
		return fmt.Sprintf("%s: extra at crash position %d: got %q, the golden has no such position", ReplayDivergence, d.Pos, d.Got)
	}
	return fmt.Sprintf("%s: mismatch at crash position %d: want %q, got %q", ReplayDivergence, d.Pos, d.Want, d.Got)
}

// compareReplay lists every divergence, in position order.
func compareReplay(want, got []goldenRow) []divergence {
	w, g := map[int]goldenRow{}, map[int]goldenRow{}
	var pos []int
	for _, r := range want {
		w[r.Pos] = r
		pos = append(pos, r.Pos)
	}
	for _, r := range got {
		if _, ok := w[r.Pos]; !ok {
			pos = append(pos, r.Pos)
		}
		g[r.Pos] = r
	}
	sort.Ints(pos)
	var out []divergence
	for _, p := range pos {
		wr, inW := w[p]
		gr, inG := g[p]
		switch {
		case !inG:
			out = append(out, divergence{Kind: "missing", Pos: p, Want: wr.String()})
		case !inW:
			out = append(out, divergence{Kind: "extra", Pos: p, Got: gr.String()})
		case wr != gr:
			out = append(out, divergence{Kind: "mismatch", Pos: p, Want: wr.String(), Got: gr.String()})
		}
	}
	return out
}

// replaySession decides every crash point of a recorded session: the
// evidence (ledger and transcript merged in time order) is cut right after
// each event, in memory, and Reconcile runs over the cut as a dry run.
func replaySession(t *testing.T, ledgerPath, transcriptPath string) []goldenRow {
	t.Helper()
	lb, err := os.ReadFile(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := os.ReadFile(transcriptPath)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := timeline.QwenEvidence(lb, tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rows []goldenRow
	for n := 0; n <= ev.Len(); n++ {
		cut := ev.Cut(n)
		mem := memory.NewFS()
		if err := mem.MkdirAll("/s", 0o755); err != nil {
			t.Fatal(err)
		}
		for i, p := range []string{"/s/l.jsonl", "/s/t.jsonl"} {
			if err := mem.WriteFile(p, cut[i], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := tailproof.Reconcile(context.Background(), jsonl.NewFilesStore(mem, "/s/l.jsonl", "/s/t.jsonl"), "",
			tailproof.Options{Now: func() int64 { return tailproof.MaxTimeValue }, DryRun: true})
		if err != nil {
			t.Fatalf("crash position %d: %v", n, err)
		}
		row := goldenRow{Pos: n, Verdict: string(tailproof.VerdictNone)}
		var verdicts, targets, guards []string
		for _, dec := range d.Decisions {
			verdicts, targets = append(verdicts, string(dec.Verdict)), append(targets, dec.Target)
			for _, v := range dec.Vetoes {
				guards = append(guards, v.Guard)
			}
		}
		if len(verdicts) > 0 {
			row.Verdict, row.Target = strings.Join(verdicts, "+"), strings.Join(targets, "+")
		}
		row.Vetoes = strings.Join(guards, ",")
		rows = append(rows, row)
	}
	return rows
}

func parseGolden(b []byte) ([]goldenRow, error) {
	var rows []goldenRow
	sc := bufio.NewScanner(bytes.NewReader(b))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || len(f) > 4 {
			return nil, fmt.Errorf("line %d: want `POS VERDICT TARGET [GUARD,...]`, got %q", ln, line)
		}
		pos, err := strconv.Atoi(f[0])
		if err != nil || pos < 0 {
			return nil, fmt.Errorf("line %d: bad position %q", ln, f[0])
		}
		r := goldenRow{Pos: pos, Verdict: f[1], Target: f[2]}
		if r.Target == "-" {
			r.Target = ""
		}
		if len(f) == 4 {
			r.Vetoes = f[3]
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

func goldenHeader(b []byte) string {
	var h strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		h.WriteString(l)
	}
	return h.String()
}

// rewriting is datadriven's -rewrite flag when the root test binary has it.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

func TestReplayGolden(t *testing.T) {
	chats, err := filepath.Glob(filepath.Join(goldenDir, "projects", "*", "chats", "*.ledger.jsonl"))
	if err != nil || len(chats) == 0 {
		t.Fatalf("no recorded sessions under %s (%v)", goldenDir, err)
	}
	seen := map[string]bool{}
	for _, lp := range chats {
		id := strings.TrimSuffix(filepath.Base(lp), ".ledger.jsonl")
		seen[id] = true
		t.Run(id, func(t *testing.T) {
			got := replaySession(t, lp, strings.TrimSuffix(lp, ".ledger.jsonl")+".jsonl")
			gp := filepath.Join(goldenDir, id+".golden")
			b, err := os.ReadFile(gp)
			if rewriting() {
				var out strings.Builder
				out.WriteString(goldenHeader(b))
				for _, r := range got {
					out.WriteString(r.String() + "\n")
				}
				if err := os.WriteFile(gp, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v (run with -rewrite to record it)", ReplayDivergence, err)
			}
			want, err := parseGolden(b)
			if err != nil {
				t.Fatalf("%s: %v", gp, err)
			}
			for _, d := range compareReplay(want, got) {
				t.Error(d)
			}
		})
	}
	goldens, _ := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	for _, g := range goldens {
		if id := strings.TrimSuffix(filepath.Base(g), ".golden"); !seen[id] {
			t.Errorf("%s: %s has no recorded session", ReplayDivergence, g)
		}
	}
}

// TestReplayDivergenceReported alters a real golden and checks the replay
// reports exactly that change, at that position, under the one code.
func TestReplayDivergenceReported(t *testing.T) {
	const id = "4a9d8c2e-6b1f-4e7a-8c3d-5f6e7a8b9c0d"
	b, err := os.ReadFile(filepath.Join(goldenDir, id+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseGolden(b)
	if err != nil {
		t.Fatal(err)
	}
	lp := filepath.Join(goldenDir, "projects", "-work-golden", "chats", id+".ledger.jsonl")
	got := replaySession(t, lp, strings.TrimSuffix(lp, ".ledger.jsonl")+".jsonl")
	if d := compareReplay(want, got); len(d) != 0 {
		t.Fatalf("the golden itself diverges: %v", d)
	}

	altered := append([]goldenRow(nil), want...)
	altered[2].Verdict = "completed" // the recording says interrupted here
	d := compareReplay(altered, got)
	if len(d) != 1 || d[0].Kind != "mismatch" || d[0].Pos != 2 {
		t.Fatalf("altered expectation: got %v, want one mismatch at position 2", d)
	}
	msg := d[0].String()
	if !strings.HasPrefix(msg, ReplayDivergence+": mismatch at crash position 2:") || !strings.Contains(msg, "interrupted") {
		t.Fatalf("message %q does not name the code, the kind, the position and the recorded verdict", msg)
	}

	d = compareReplay(want[:len(want)-1], got)
	if len(d) != 1 || d[0].Kind != "extra" || d[0].Pos != len(want)-1 {
		t.Fatalf("truncated golden: got %v, want one extra at position %d", d, len(want)-1)
	}
	d = compareReplay(append(append([]goldenRow(nil), want...), goldenRow{Pos: 99, Verdict: "none"}), got)
	if len(d) != 1 || d[0].Kind != "missing" || d[0].Pos != 99 {
		t.Fatalf("longer golden: got %v, want one missing at position 99", d)
	}
}
