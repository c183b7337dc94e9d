package simulations

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// The two rule sets, built once: a Rules value is immutable (its guards are
// stateless values), so every daemon on every worker shares them, where
// Options.Reference would build the set again on each of a scenario's calls.
var tailproofRules, referenceRules = reconcile.Tailproof(), reconcile.Qwen0244()

// memoSize is how many transcripts a memo keeps: enough for the final
// crash's, the restarts' and the previous crash point's (more found no
// more hits).
const memoSize = 4

// memos lends each model run a transcript memo, so its buffers outlive the
// run; what a memo remembers is keyed by exact bytes, so a run may reuse
// another's.
var memos = sync.Pool{New: func() any { return tailproof.NewTranscriptMemo(memoSize) }}

// recover reconciles until a call appends nothing (a call settles every
// prompt its evidence proves; settling one can prove another on the next
// call) and returns the verdict appended per prompt.
func (d *Daemon) recover(store *memory.QwenStore, reference bool) (map[string]tailproof.Verdict, error) {
	out, _, err := d.recoverWhy(store, reference)
	return out, err
}

// unknownWhy names, per prompt, the guard that stopped the last call for it
// (the reason it stayed unknown): its own decision's first veto, or, for a
// prompt the call did not consider (the reference decides one per call),
// the first veto of the call.
type unknownWhy struct {
	byPrompt map[string]string
	first    string
	// dangling is the first call's Result.Dangling: the prompts the ledger
	// left in flight as the recovery found it, in admission order.
	dangling []string
}

func (w unknownWhy) of(id string) string {
	if g, ok := w.byPrompt[id]; ok {
		return g
	}
	return w.first
}

// recoverWhy is recover that also names the guard that stopped the last
// call for each prompt.
func (d *Daemon) recoverWhy(store *memory.QwenStore, reference bool) (map[string]tailproof.Verdict, unknownWhy, error) {
	var out map[string]tailproof.Verdict // made at the first append (most calls append nothing)
	if d.now == nil {
		d.now = func() int64 { return d.clock }
	}
	if d.memo == nil {
		d.memo = tailproof.NewTranscriptMemo(memoSize)
	}
	opts := tailproof.Options{Now: d.now, Rules: tailproofRules, NoTrace: true, Memo: d.memo}
	if reference {
		opts.Rules = referenceRules
	}
	var why unknownWhy
	for i := 0; i < len(d.prompts)+1; i++ {
		res, err := tailproof.Reconcile(d.ctx, store, d.sid, opts)
		if i == 0 {
			why.dangling = res.Dangling
		}
		if errors.Is(err, tailproof.ErrInvalidClock) {
			// The restarted daemon's clock stepped back behind a prompt's
			// admission: the façade refuses to stamp a terminal before its
			// prompt, and nothing is appended — unknown until the clock
			// catches up.
			d.tracef("reconcile (reference=%v): %v", reference, err)
			why.first = "invalid-clock"
			return out, why, nil
		}
		if err != nil {
			return out, why, fmt.Errorf("reconcile (reference=%v): %w", reference, err)
		}
		appended := 0
		for _, dec := range res.Decisions {
			if dec.Appended == nil {
				continue
			}
			appended++
			if _, dup := out[dec.Target]; dup {
				return out, why, fmt.Errorf("reconcile (reference=%v) appended twice for %s", reference, dec.Target)
			}
			if out == nil {
				out = map[string]tailproof.Verdict{}
			}
			out[dec.Target] = dec.Verdict
			if d.trace != nil { // boxing the arguments allocates, traced or not
				d.tracef("reconcile (reference=%v): %s %s", reference, dec.Target, dec.Verdict)
			}
			if store == d.store {
				d.acked = append(d.acked, dec.Line)
			}
		}
		if appended == 0 {
			for _, dec := range res.Decisions {
				if len(dec.Vetoes) > 0 {
					if why.byPrompt == nil {
						why.byPrompt = map[string]string{}
					}
					why.byPrompt[dec.Target] = dec.Vetoes[0].Guard
					if why.first == "" {
						why.first = dec.Vetoes[0].Guard
					}
				}
			}
			return out, why, nil
		}
	}
	return out, why, fmt.Errorf("reconcile (reference=%v) did not settle", reference)
}

// Finish crashes the process a final time and scores every dangling prompt
// under both rule sets (see finish). Call it once, after the actions.
func (d *Daemon) Finish() Result {
	res := Result{RestartDigest: d.restartRec.digest}
	d.finish(&res)
	return res
}

// finish crashes the process a final time — possibly inside a ledger
// append — and scores every dangling prompt under both rule sets.
func (d *Daemon) finish(res *Result) {
	res.Violations = append(res.Violations, d.violations...)
	res.RestartDecided = d.restartRec.decided
	res.Continues, res.WedgedWindow = d.continues, d.wedgedWindow
	defer func() { res.WrongTerminals = append(res.WrongTerminals, d.wrong...) }()
	if len(res.Violations) > 0 {
		return
	}
	kind := d.drawCrash()
	if d.pct(d.prof.TornLedgerPct) {
		d.armTornLedger()
		d.armed = true
		for i := 0; i < 12 && d.armed; i++ {
			err := d.Do(d.choose())
			if isCrash(err) {
				break
			}
			if err != nil {
				res.Violations = append(res.Violations, err.Error())
				return
			}
		}
	}
	d.armed = false
	if err := d.crashAs(kind, true); err != nil {
		res.Violations = append(res.Violations, err.Error())
		return
	}
	// The evidence, copied for the baseline before tailproof touches it.
	ref := memory.NewQwenStoreOn(d.mem.Clone(), d.store.Layout())
	lb, _ := d.mem.ReadFileShared(d.lpath)
	tb, _ := d.mem.ReadFileShared(d.tpath)
	res.TornTranscript = len(tb) > 0 && tb[len(tb)-1] != '\n'
	res.TornLedger = len(lb) > 0 && lb[len(lb)-1] != '\n'
	tp, tpWhy, err := d.recoverWhy(d.store, false)
	if err != nil {
		res.Violations = append(res.Violations, err.Error())
		return
	}
	// The prompts the crash left dangling: the first reconciliation's fold
	// of the ledger as the crash left it (lb), before anything was appended.
	dangling := tpWhy.dangling
	rf, rfWhy, err := d.recoverWhy(ref, true)
	if err != nil {
		res.Violations = append(res.Violations, err.Error())
		return
	}
	// A second recovery appends nothing: recover stops at the first call
	// that appends nothing, which is the second recovery of the evidence the
	// last append left (Reconcile is a function of the files, and that call
	// changed none), so its verdict-less return is the check. recover fails
	// when a prompt would be settled twice.
	if err := d.checkAcked(); err != nil {
		res.Violations = append(res.Violations, err.Error())
	}
	res.Digest.Hash[0], res.Digest.Tailproof = digestVerdicts(dangling, tp, tpWhy.of, res.RestartDigest)
	res.Digest.Hash[1], res.Digest.Reference = digestVerdicts(dangling, rf, rfWhy.of, res.RestartDigest)
	for id := range tp {
		if !contains(dangling, id) {
			res.Violations = append(res.Violations, fmt.Sprintf("tailproof appended a terminal for %s, which was not dangling", id))
		}
	}
	for _, id := range dangling {
		p := d.byID[id]
		if p == nil {
			res.Violations = append(res.Violations, fmt.Sprintf("dangling prompt %s was never admitted by the model", id))
			continue
		}
		if p.lost {
			res.LostDangling++
		}
		o, lost := Judge(tp[id], p.truth, p.lost)
		if d.collect {
			ro, _ := Judge(rf[id], p.truth, p.lost)
			res.AmbiguityKeys = append(res.AmbiguityKeys, DanglingKey{Key: evidenceKey(lb, tb, id),
				Completed: p.truth == TruthCompleted && !p.lost, TP: o, Ref: ro})
		}
		res.Tailproof.count(o, lost)
		if o == Unknown {
			res.Tailproof.because(tpWhy.of(id))
		}
		if o == Wrong {
			d.wrong = append(d.wrong, fmt.Sprintf("wrong terminal: tailproof stamped %s %s, truth %s", id, tp[id], describeTruth(p)))
		}
		o, lost = Judge(rf[id], p.truth, p.lost)
		res.Reference.count(o, lost)
		if o == Unknown {
			res.Reference.because(rfWhy.of(id))
		}
		if o == Wrong {
			res.ReferenceWrong = append(res.ReferenceWrong, fmt.Sprintf("reference stamped %s %s, truth %s", id, rf[id], describeTruth(p)))
		}
	}
}

func describeTruth(p *prompt) string {
	s := p.truth.String()
	if p.lost {
		s += " (final record lost in the crash)"
	}
	if p.shape != "" {
		s += " (" + p.shape + ")"
	}
	if p.ended && !p.finished {
		s += " (ended, not yet on disk)"
	}
	return s
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
