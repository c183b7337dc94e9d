package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/guards"
)

// Deliberate differences between tailproof's default mode and the reference,
// as docs/adr/0003-reconcile-differences-from-qwen.md lists them (section in
// brackets). A default-mode disagreement must be exactly one of these.
const (
	CatOwnership        = "a-ownership"            // identity evidence replaced ordering and clocks
	CatSystemProvenance = "b-system-provenance"    // only system-provenance writes after admission
	CatIntegrity        = "c-transcript-integrity" // an undecodable line in the committed region [§5]
	// CatChainDegraded is (c)'s guard refusing a chain the reference reads
	// past: a history gap, a parent cycle, an invalid or unknown-type record
	// skipped, fragments that disagree on their parent.
	CatChainDegraded    = "c-chain-degraded"
	CatNotificationTrim = "d-notification-trim" // the tail trimmed by provenance, not content shape [§4]
	// CatBackgroundTurn: guards.BackgroundTurn vetoes when a cron, delivered
	// notification or goal turn opened after admission [§2].
	CatBackgroundTurn = "e-background-turn"
	// CatDispatchEvidence: no prompt record after the admission, so the tail
	// is another turn's [§2b].
	CatDispatchEvidence = "f-dispatch-evidence"
	// CatClockMonotonic: clock attribution refused after a backward clock
	// step in the ledger or the transcript [§2c].
	CatClockMonotonic = "g-clock-monotonic"
	// CatLocalCommand: a local slash command answered the target after its
	// admission, with nothing after it [§2d].
	CatLocalCommand = "h-local-command"
	// CatNotStarted: no user-role record after the target's marker, so its
	// turn never started and it is stamped interrupted without classifying
	// the foreign tail [§2e] — or, when the rest of never-started evidence
	// fails (guards.NeverStarted, 2026-12-01), unknown where the reference
	// classifies a tail that may be the target's own turn.
	CatNotStarted = "i-not-started"
	// CatOwnRecordAbsent: where the writer stamps identities, the target's
	// own record provably never reached the transcript after its marker, so
	// it is stamped interrupted [ADR 0023 part B].
	CatOwnRecordAbsent = "j-own-record-absent"
	// CatSettledTurn: the target's own turn_result settled it cancelled or
	// in error; the daemon's exact terminal is appended, or the outcome is
	// refused by settled-turn [ADR 0026].
	CatSettledTurn = "k-settled-turn"
	// CatCallIdentity: call identity (0.24.4's telemetry prompt ids) bounds
	// the target's turn, or refuses a contradiction [ADR 0023 part A].
	CatCallIdentity = "l-call-identity"
)

// Categories lists the deliberate differences in report order.
var Categories = []string{CatOwnership, CatSystemProvenance, CatIntegrity, CatChainDegraded, CatNotificationTrim, CatBackgroundTurn, CatDispatchEvidence, CatClockMonotonic, CatLocalCommand, CatNotStarted, CatOwnRecordAbsent, CatSettledTurn, CatCallIdentity}

// Outcome is one scenario run through the reference and both tailproof modes.
type Outcome struct {
	Scenario Scenario
	JS       JSResult
	Ref      tailproof.Decision // Reference mode, appended for real
	Def      tailproof.Decision // default mode, dry run
	RefAdded string             // bytes Reference mode added to the ledger
	DefErr   error
	RefErr   error

	// RefMismatch describes how Reference mode differs from the reference
	// ("" when it agrees exactly). Any mismatch is a tailproof bug.
	RefMismatch string
	// Known names the known reference-mode bug (see KnownMismatches) the
	// mismatch is, "" when it is new.
	Known string
	// DefAgrees: default mode reached the reference's verdict and record.
	DefAgrees bool
	// Category is the deliberate difference a default-mode disagreement
	// falls under; "" with DefAgrees false means unclassified (a failure).
	Category string
	// Why says how the category was decided, or why nothing fit.
	Why string
}

// Failed reports whether the outcome breaks conformance.
func (o *Outcome) Failed() bool {
	return (o.RefMismatch != "" && o.Known == "") || (!o.DefAgrees && o.Category == "")
}

// nowMs is the clock both tailproof modes see; `at` is never compared.
const nowMs = 1767225600000 + 86400000

// legacyTimestamp finds timestamps only V8's legacy date parser accepts.
var legacyTimestamp = regexp.MustCompile(`"timestamp":"(\d{4}-\d\d-\d\d \d|[A-Z][a-z]{2}, )`)

var atField = regexp.MustCompile(`"at":[-+0-9.eE]+}$`)

// normalizeAt replaces the record's `at` (the reference stamps Date.now()).
func normalizeAt(line string) string { return atField.ReplaceAllString(line, `"at":0}`) }

// jsAdded is the byte string the reference added to the ledger.
func (r JSResult) jsAdded() string {
	if r.Appended == nil {
		return ""
	}
	s := r.Line + "\n"
	if r.Sealed {
		s = "\n" + s
	}
	return s
}

func normalizeAdded(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = normalizeAt(lines[i])
	}
	return strings.Join(lines, "\n")
}

// runTailproof lays the scenario's files out in Qwen's layout under dir and
// reconciles them through the production OS-backed store. It returns the
// decision and the bytes it appended.
func runTailproof(ctx context.Context, dir string, s Scenario, reference, dryRun bool) (tailproof.Decision, string, [2]string, error) {
	var paths [2]string
	layout := jsonl.NewQwenLayout(dir, s.Cwd)
	lp, err := layout.LedgerPath(s.SessionID, jsonl.Active)
	if err != nil {
		return tailproof.Decision{}, "", paths, fmt.Errorf("conformance: ledger path: %w", err)
	}
	tp, err := layout.TranscriptPath(s.SessionID, jsonl.Active)
	if err != nil {
		return tailproof.Decision{}, "", paths, fmt.Errorf("conformance: transcript path: %w", err)
	}
	paths[0], _ = filepath.Rel(dir, lp)
	paths[1], _ = filepath.Rel(dir, tp)
	if err := os.MkdirAll(filepath.Dir(lp), 0o700); err != nil {
		return tailproof.Decision{}, "", paths, fmt.Errorf("conformance: %w", err)
	}
	if err := os.WriteFile(lp, []byte(s.Ledger), 0o600); err != nil {
		return tailproof.Decision{}, "", paths, fmt.Errorf("conformance: %w", err)
	}
	if s.Transcript != nil {
		if err := os.WriteFile(tp, []byte(*s.Transcript), 0o600); err != nil {
			return tailproof.Decision{}, "", paths, fmt.Errorf("conformance: %w", err)
		}
	}
	store := jsonl.NewQwenStore(vfs.OS, layout)
	res, rerr := tailproof.Reconcile(ctx, store, s.SessionID, tailproof.Options{
		Now: func() int64 { return nowMs }, Reference: reference, DryRun: dryRun,
	})
	d := sessionDecision(res)
	after, err := os.ReadFile(lp)
	if err != nil {
		return d, "", paths, fmt.Errorf("conformance: read ledger back: %w", err)
	}
	if !bytes.HasPrefix(after, []byte(s.Ledger)) {
		return d, "", paths, fmt.Errorf("conformance: tailproof rewrote the ledger's existing bytes")
	}
	return d, string(after[len(s.Ledger):]), paths, rerr
}

// sessionDecision is the one decision a conformance scenario is judged by:
// the reference decides at most one prompt per session, so its scenarios
// have at most one dangling prompt whose decision matters — the first that
// appended, else the first considered (none: nothing dangled). Its trace is
// the whole reconciliation's.
func sessionDecision(res tailproof.Result) tailproof.Decision {
	d := tailproof.Decision{Verdict: tailproof.VerdictNone}
	if len(res.Decisions) > 0 {
		d = res.Decisions[0]
	}
	if a := res.Appended(); len(a) > 0 {
		d = a[0]
	}
	d.Trace = res.Trace
	return d
}

// Compare runs s through both tailproof modes in scratch (a directory it
// may fill and empty) and judges them against the reference's result js.
func Compare(ctx context.Context, scratch string, s Scenario, js JSResult) *Outcome {
	o := &Outcome{Scenario: s, JS: js}
	if js.Error != "" {
		o.RefMismatch = "the reference failed: " + js.Error
		return o
	}
	refDir, defDir := filepath.Join(scratch, "ref"), filepath.Join(scratch, "def")
	defer os.RemoveAll(refDir)
	defer os.RemoveAll(defDir)

	var paths [2]string
	o.Ref, o.RefAdded, paths, o.RefErr = runTailproof(ctx, refDir, s, true, false)
	var mism []string
	if paths[0] != js.LedgerPath || paths[1] != js.TranscriptPath {
		mism = append(mism, fmt.Sprintf("layout: tailproof %s, %s; reference %s, %s", paths[0], paths[1], js.LedgerPath, js.TranscriptPath))
	}
	if o.RefErr != nil {
		mism = append(mism, "tailproof error: "+o.RefErr.Error())
	}
	if got, want := normalizeAdded(o.RefAdded), normalizeAdded(js.jsAdded()); got != want {
		mism = append(mism, fmt.Sprintf("appended: tailproof %q (verdict %s), reference %q", got, o.Ref.Verdict, want))
	}
	o.RefMismatch = strings.Join(mism, "; ")

	var defAdded string
	o.Def, _, _, o.DefErr = runTailproof(ctx, defDir, s, false, true)
	if o.RefMismatch != "" {
		o.Known = knownMismatch(o)
	}
	if o.Def.Appended != nil {
		defAdded = string(o.Def.Line)
	}
	jsLine := ""
	if js.Appended != nil {
		jsLine = js.Line
	}
	if o.Known != "" {
		// A known reference-mode bug affects both modes alike: judge the
		// default mode against reference mode instead.
		jsLine = ""
		if o.Ref.Appended != nil {
			jsLine = string(o.Ref.Line)
		}
	}
	// A clock the façade refused (a terminal before its own prompt's
	// admission) appended nothing: that is an answer to compare, not a
	// failure.
	clockRefused := errors.Is(o.DefErr, tailproof.ErrInvalidClock)
	o.DefAgrees = (o.DefErr == nil || clockRefused) && normalizeAt(defAdded) == normalizeAt(jsLine)
	if !o.DefAgrees {
		o.Category, o.Why = classify(o)
	}
	return o
}

func vetoNames(d tailproof.Decision) []string {
	var names []string
	for _, v := range d.Vetoes {
		names = append(names, v.Guard)
	}
	return names
}

func hasVeto(d tailproof.Decision, name string) (guards.Veto, bool) {
	for _, v := range d.Vetoes {
		if v.Guard == name {
			return v, true
		}
	}
	return guards.Veto{}, false
}

// identitySkipped are the ordering and clock guards the ownership evidence
// replaces when it identifies the target's turn.
var identitySkipped = []string{"dispatch-marker", "temporal", "predecessor-fence", "system-provenance"}

// classify names the deliberate difference behind a default-mode
// disagreement, from the guards that vetoed in one mode and not the other
// and from the evidence they looked at. Each rule is narrow: a disagreement
// that fits none stays unclassified and fails the run.
func classify(o *Outcome) (string, string) {
	ref, def := o.Ref, o.Def
	if errors.Is(o.DefErr, tailproof.ErrInvalidClock) {
		return CatClockMonotonic, "the default mode refused to stamp a terminal before its prompt's admission: " + o.DefErr.Error()
	}
	if o.DefErr != nil {
		return "", "default mode failed: " + o.DefErr.Error()
	}
	if ref.Evidence == nil || def.Evidence == nil {
		return "", "a decision without evidence"
	}
	// (c) corruption in the committed region, or a chain the default mode
	// refuses as degraded, where the reference read past it.
	if v, ok := hasVeto(def, "transcript-integrity"); ok {
		t := def.Evidence.Transcript
		if _, refToo := hasVeto(ref, "transcript-integrity"); !refToo {
			switch {
			case len(t.BadLines) > 0:
				return CatIntegrity, v.Reason
			case t.Degraded != "":
				return CatChainDegraded, v.Reason
			}
		}
	}
	// (a) ownership evidence: a veto by identity, a decision by the target's
	// own turn_result, or an identified turn freeing the target from the
	// ordering guards that vetoed in the reference.
	own := def.Evidence.Transcript.Ownership
	if def.Evidence.Classification.FromSettledTurn && def.Appended != nil {
		return CatSettledTurn, "the target's own turn_result settled it " + own.TurnResult + ": the daemon's exact terminal"
	}
	if v, ok := hasVeto(def, "settled-turn"); ok {
		return CatSettledTurn, v.Reason
	}
	if def.Evidence.Classification.FromAbsence && def.Appended != nil {
		return CatOwnRecordAbsent, "the target's own record is provably absent after its marker: its turn never started"
	}
	if v, ok := hasVeto(def, "call-identity"); ok {
		return CatCallIdentity, v.Reason
	}
	if own.CallIdentity && own.TurnEndIdx >= 0 {
		return CatCallIdentity, "the target's turn ends at #" + fmt.Sprint(own.TurnEndIdx) + ": " + own.TurnEnd
	}
	if v, ok := hasVeto(def, "ownership"); ok && own.Active {
		return CatOwnership, v.Reason
	}
	if def.Evidence.Classification.FromTurnResult {
		return CatOwnership, "the target's turn_result settled it as completed"
	}
	if def.Evidence.Classification.FromCheckpoint && def.Appended != nil {
		return CatOwnership, "the target's own turn wrote its branch_checkpoint: it returned end_turn (ADR 0031)"
	}
	if _, ok := hasVeto(ref, "single-dangling"); ok && own.Active && own.TargetIdx >= 0 && own.FollowedBy == "" && def.Appended != nil {
		return CatOwnership, "several dangling prompts: identity shows the last-admitted one's turn is the tail (ADR 0003 §1b)"
	}
	if own.Active && own.TargetIdx >= 0 && own.FollowedBy == "" && def.Appended != nil {
		rv := vetoNames(ref)
		if len(rv) > 0 && subset(rv, identitySkipped) {
			return CatOwnership, fmt.Sprintf("identified turn (own user record #%d, nothing after it) replaces the reference's %s", own.TargetIdx, strings.Join(rv, ", "))
		}
	}
	// (a) under an identified turn the compression fence is re-anchored on
	// the target's own user record (ADR 0003 "What stays"): a compression
	// before it belongs to an earlier turn, one after it to the target's —
	// whatever the marker or the clock says.
	if own.Active && own.TargetIdx >= 0 && own.FollowedBy == "" {
		_, refComp := hasVeto(ref, "compression-checkpoint")
		_, defComp := hasVeto(def, "compression-checkpoint")
		if refComp != defComp {
			return CatOwnership, fmt.Sprintf("compression fence re-anchored on the target's own record #%d", own.TargetIdx)
		}
		// …and so is a local slash command's completion: its result after the
		// target's own record answers it, whatever its clock says.
		if _, refNoAnswer := hasVeto(ref, "completion-evidence"); refNoAnswer && def.Evidence.Transcript.LocalCommandDone && !ref.Evidence.Transcript.LocalCommandDone {
			return CatOwnership, fmt.Sprintf("local slash command answered the target's own record #%d", own.TargetIdx)
		}
	}
	// (i) no user-role record after the target's marker: it never started.
	if def.Evidence.Classification.FromNotDispatched && def.Appended != nil {
		return CatNotStarted, "no user-role record after the target's admission marker: its turn never started"
	}
	if v, ok := hasVeto(def, "never-started"); ok {
		return CatNotStarted, v.Reason
	}
	// (f) no prompt record after the admission: the tail is another turn's.
	if v, ok := hasVeto(def, "dispatch-evidence"); ok {
		return CatDispatchEvidence, v.Reason
	}
	// (g) clock attribution after a backward clock step.
	if v, ok := hasVeto(def, "clock-monotonic"); ok {
		return CatClockMonotonic, v.Reason
	}
	// (h) a local slash command answered the target.
	if def.Evidence.Classification.FromLocalCommand && def.Appended != nil {
		return CatLocalCommand, "a local slash command answered the target after its admission"
	}
	// (b) every visible write after admission came from the host.
	if v, ok := hasVeto(def, "system-provenance"); ok {
		if _, refToo := hasVeto(ref, "system-provenance"); !refToo {
			return CatSystemProvenance, v.Reason
		}
	}
	// (e) a background turn (cron, delivered notification, goal
	// continuation) opened after admission; its model records carry no
	// identity, so the tail may be its.
	if v, ok := hasVeto(def, "background-turn"); ok && def.Evidence.Transcript.BackgroundIdx >= 0 {
		return CatBackgroundTurn, v.Reason
	}
	// (d) default mode refuses a tail whose notifications could be trimmed
	// only by their text shape (records without provenance).
	if v, ok := hasVeto(def, "shape-guess"); ok {
		if _, refToo := hasVeto(ref, "shape-guess"); !refToo {
			return CatNotificationTrim, v.Reason
		}
	}
	// (d) both modes got past the evidence check with the same evidence
	// verdicts; the classifiable tail differed because default mode trims
	// notifications by provenance and the reference by content shape.
	// Without a notification envelope anywhere the trims cannot differ, so
	// a classification gap there is not this category.
	if passedCheck(ref) && passedCheck(def) && o.Scenario.Transcript != nil &&
		strings.Contains(*o.Scenario.Transcript, "task-notification") {
		rv, dv := ref.Evidence.Classification, def.Evidence.Classification
		if rv.Kind != dv.Kind || rv.IdlessUpgrade != dv.IdlessUpgrade || rv.Interrupted != dv.Interrupted {
			return CatNotificationTrim, fmt.Sprintf("tail classified %s%s by provenance, %s%s by shape",
				dv.Kind, upgraded(dv), rv.Kind, upgraded(rv))
		}
	}
	return "", fmt.Sprintf("reference-mode vetoes [%s], default-mode vetoes [%s], verdicts %s / %s",
		strings.Join(vetoNames(ref), ", "), strings.Join(vetoNames(def), ", "), ref.Verdict, def.Verdict)
}

func upgraded(c guards.Classification) string {
	if c.IdlessUpgrade {
		return "+functionCall"
	}
	return ""
}

// passedCheck: the decision got past the evidence guards (it classified).
func passedCheck(d tailproof.Decision) bool {
	if d.Evidence == nil || !d.Evidence.Classification.Done {
		return false
	}
	for _, v := range d.Vetoes {
		if v.Guard != "completion-evidence" && v.Guard != "race" {
			return false
		}
	}
	return true
}

func subset(xs, of []string) bool {
	for _, x := range xs {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}
