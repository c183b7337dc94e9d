package qwenserve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/simulations"
)

// Truth is what happened to a prompt, from the mock's log and the
// harness's own actions only.
type Truth string

// Truths.
const (
	// TruthCompleted: the final answer of the prompt's turn was fully
	// streamed ([DONE] flushed).
	TruthCompleted Truth = "completed"
	// TruthCancelled: the harness's POST /cancel answered 204 while the
	// prompt's answer was held mid-stream, and no final answer completed.
	TruthCancelled Truth = "cancelled"
	// TruthInterrupted: the model was asked for the prompt but its final
	// answer was never fully streamed.
	TruthInterrupted Truth = "interrupted"
	// TruthNotAsked: no model request for the prompt (queued, or dispatched
	// without reaching the model): it never ran to an answer.
	TruthNotAsked Truth = "not-asked"
)

// Outcome scores one terminal against its truth.
type Outcome string

// Outcomes.
const (
	Correct Outcome = "correct"
	Unknown Outcome = "unknown"
	Wrong   Outcome = "wrong"
)

// Judge scores a terminal ("" for none) against truth t. Interrupted is
// correct for every prompt whose turn did not complete (cancelled included:
// the simulator's convention); for a completed one only when the crash
// lost its final answer (lost: the answer's nonce is not in the
// transcript), as the durable history then ends inside the turn.
func Judge(terminal string, t Truth, lost bool) Outcome {
	switch ledger.TerminalState(terminal) {
	case "":
		return Unknown
	case ledger.Completed:
		if t == TruthCompleted {
			return Correct
		}
	case ledger.Interrupted:
		if t != TruthCompleted || lost {
			return Correct
		}
	case ledger.Cancelled:
		if t == TruthCancelled {
			return Correct
		}
	}
	return Wrong
}

// PromptScore is one dangling prompt at one crash, scored.
type PromptScore struct {
	PromptID string `json:"promptId"`
	Name     string `json:"name"` // its marker, or the slash command
	Epoch    int    `json:"epoch"`
	Truth    Truth  `json:"truth"`
	// Lost: the truth is completed but the answer never reached the
	// transcript.
	Lost             bool    `json:"lost,omitempty"`
	Tailproof        string  `json:"tailproof"`
	TailproofOutcome Outcome `json:"tailproofOutcome"`
	// Guard and Reason: the first veto of an unknown decision.
	Guard       string  `json:"guard,omitempty"`
	Reason      string  `json:"reason,omitempty"`
	Qwen        string  `json:"qwen,omitempty"`
	QwenOutcome Outcome `json:"qwenOutcome,omitempty"`
}

// CrashResult is one crash of a scenario.
type CrashResult struct {
	Epoch int       `json:"epoch"`
	Kill  KillPoint `json:"kill"`
	// Missed says why the scripted moment never came ("" when it did); the
	// crash happened at the timeout instead.
	Missed string `json:"missed,omitempty"`
	// Final: the last crash, the one Qwen's restart + load also scored.
	Final   bool          `json:"final"`
	Prompts []PromptScore `json:"prompts"`
	// StatusErr is tailproof.Status's error on this state ("" for none).
	StatusErr string `json:"statusErr,omitempty"`
	// QwenLoad is how Qwen's /load answered ("" for 200).
	QwenLoad string `json:"qwenLoad,omitempty"`
	// Shapes are the transcript's record shapes at the crash.
	Shapes []string `json:"-"`
}

// ScenarioResult is one scenario's crashes.
type ScenarioResult struct {
	Scenario      Scenario      `json:"-"`
	Name          string        `json:"scenario"`
	Shape         Shape         `json:"shape"`
	Crashes       []CrashResult `json:"crashes"`
	ResumeRefused string        `json:"resumeRefused,omitempty"`
	Log           []Exchange    `json:"-"`
}

func (r *runner) store() *jsonl.QwenStore {
	return jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(r.env.RuntimeDir(), r.env.Workspace))
}

// scoreTailproof runs tailproof.Reconcile in dry run on the files the
// crash left and scores every decision.
func (r *runner) scoreTailproof(ctx context.Context, epoch int) ([]PromptScore, string, error) {
	st := r.store()
	// The restarted process's own clock, as a real recovery reads it: the
	// façade refuses a terminal stamped before its prompt's admission, so a
	// placeholder clock would turn every proven verdict into a refusal.
	res, err := tailproof.Reconcile(ctx, st, r.sid, tailproof.Options{Now: func() int64 { return time.Now().UnixMilli() }, DryRun: true})
	if err != nil {
		return nil, "", fmt.Errorf("qwenserve: reconcile %s: %w", r.sid, err)
	}
	statusErr := ""
	if _, err := tailproof.Status(ctx, st, r.sid, tailproof.StatusOptions{Ledger: st}); err != nil {
		statusErr = err.Error()
	}
	decided := map[string]tailproof.Decision{}
	for _, d := range res.Decisions {
		decided[d.Target] = d
	}
	transcript, _ := os.ReadFile(r.transcriptPath())
	log := r.mock.Log()
	var out []PromptScore
	for _, id := range res.Dangling {
		ps := PromptScore{PromptID: id}
		p := r.posted(id)
		if p == nil {
			return nil, "", fmt.Errorf("qwenserve: dangling prompt %s was never posted by the harness", id)
		}
		ps.Name, ps.Epoch = p.Plan.Marker, p.Epoch
		if ps.Name == "" {
			ps.Name = p.Plan.Text
		}
		var nonce string
		ps.Truth, nonce = truthOf(p, log)
		ps.Lost = ps.Truth == TruthCompleted && !holdsAnswer(transcript, nonce)
		d, ok := decided[id]
		switch {
		case !ok:
			ps.Guard, ps.Reason = "not-decided", "reconcile returned no decision for this prompt"
		case d.Appended != nil:
			ps.Tailproof = string(d.Appended.Terminal)
		case len(d.Vetoes) > 0:
			ps.Guard, ps.Reason = d.Vetoes[0].Guard, d.Vetoes[0].Reason
		default:
			ps.Guard = "state " + fmt.Sprint(d.State)
		}
		ps.TailproofOutcome = Judge(ps.Tailproof, ps.Truth, ps.Lost)
		out = append(out, ps)
	}
	return out, statusErr, nil
}

func (r *runner) posted(id string) *posted {
	for _, p := range r.prompts {
		if p.PromptID == id {
			return p
		}
	}
	return nil
}

// truthOf derives a prompt's truth from the mock's log: its exchanges are
// the prompt requests carrying its marker (for /compress, the compression
// requests; a scenario has at most one /compress).
func truthOf(p *posted, log []Exchange) (Truth, string) {
	asked := false
	for _, ex := range log {
		mine := ex.Kind == KindPrompt && p.Plan.Marker != "" && ex.Marker == p.Plan.Marker ||
			ex.Kind == KindCompression && p.Plan.Marker == ""
		if !mine {
			continue
		}
		asked = true
		if ex.Final && ex.Complete {
			return TruthCompleted, ex.Nonce
		}
	}
	switch {
	case p.Cancelled:
		return TruthCancelled, ""
	case asked:
		return TruthInterrupted, ""
	}
	return TruthNotAsked, ""
}

// holdsAnswer reports whether a record other than ui_telemetry holds the
// nonce: the completed answer reached the transcript. It is the one fact
// the judge takes from the files, and only to excuse interrupted.
func holdsAnswer(transcript []byte, nonce string) bool {
	if nonce == "" {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(transcript))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		l := sc.Bytes()
		if bytes.Contains(l, []byte(nonce)) && !bytes.Contains(l, []byte(`"subtype":"ui_telemetry"`)) {
			return true
		}
	}
	return false
}

// scoreQwen restarts the daemon, cold-loads the session (Qwen's own
// reconcileDanglingPromptTerminals) and scores the terminals it wrote to
// the ledger for the prompts tailproof scored at this crash.
func (r *runner) scoreQwen(ctx context.Context, cr *CrashResult) error {
	d, err := r.start(ctx)
	if err != nil {
		return err
	}
	defer d.Kill()
	if _, err := d.Load(ctx, r.sid, r.env.Workspace); err != nil {
		if !isNotFound(err) {
			return fmt.Errorf("qwenserve: load: %w", err)
		}
		cr.QwenLoad = "404 session_not_found"
	}
	d.Kill()
	recs, err := readLedger(r.ledgerPath())
	if err != nil {
		return err
	}
	for i := range cr.Prompts {
		ps := &cr.Prompts[i]
		for _, rec := range recs {
			if rec.PromptID == ps.PromptID && rec.IsTerminal() {
				ps.Qwen = string(rec.Terminal)
				break
			}
		}
		ps.QwenOutcome = Judge(ps.Qwen, ps.Truth, ps.Lost)
	}
	return nil
}

func readLedger(path string) ([]ledger.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("qwenserve: %w", err)
	}
	defer f.Close()
	recs, _, err := ledger.Read(f, false)
	if err != nil {
		return nil, fmt.Errorf("qwenserve: ledger %s: %w", path, err)
	}
	return recs, nil
}

// transcriptShapes lists the record shapes of a transcript.
func transcriptShapes(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("qwenserve: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		s, err := simulations.ShapeOf(l)
		if err != nil {
			continue // a torn last line
		}
		if k := s.String(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

func (r *runner) keep(res ScenarioResult) bool {
	if r.cfg.Keep == "" {
		return false
	}
	if r.cfg.KeepAll {
		return true
	}
	for _, c := range res.Crashes {
		for _, p := range c.Prompts {
			if p.TailproofOutcome != Correct {
				return true
			}
		}
	}
	return false
}

// snapshot copies the runtime dir's projects (transcripts and ledgers) as
// the crash left them to dir/crashes/<epoch>/projects, for --keep: a kept
// crash directory is a runtime dir (QWEN_RUNTIME_DIR=<it> tailproof …).
func snapshot(runtimeDir, dir string, epoch int) error {
	return copyTree(filepath.Join(runtimeDir, "projects"), filepath.Join(dir, "crashes", fmt.Sprint(epoch), "projects"))
}

func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("qwenserve: copy %s: %w", src, err)
	}
	return nil
}

// keepState copies a scenario's crash snapshots and the mock's log to
// keep/<seed>-<index>-<shape>.
func keepState(keep string, sc Scenario, dir string, log []Exchange) error {
	dst := filepath.Join(keep, fmt.Sprintf("%d-%d-%s", sc.Seed, sc.Index, sc.Shape))
	if err := copyTree(filepath.Join(dir, "crashes"), dst); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(sc.String() + "\n")
	for _, ex := range log {
		fmt.Fprintf(&b, "%+v\n", ex)
	}
	if err := os.WriteFile(filepath.Join(dst, "mock.log"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("qwenserve: keep: %w", err)
	}
	return nil
}
