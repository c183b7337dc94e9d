package main

import (
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/attribution"
	"github.com/tailproof/tailproof/projections/ledgerview"
)

// incremental keeps a step's transcript projections up to date one record
// at a time while the transcript so far is one linear chain: every record a
// conversation record, the first a root, each next one the child of the one
// before, no uuid twice, no undecodable line. Then the active chain of every
// prefix is exactly the records so far in order (what LoadChain and Walk
// yield on the cut, ADR 0020), so the api history is one fold over the
// session instead of one per step. The attribution fold is seeded with the
// target, its marker and its admission time; when those change (at most
// once per admission) it is forked from a target-free fold of the records
// so far (attribution.Neutral, ADR 0035), or rebuilt over them where the
// fork is refused; a step that changes nothing else costs O(1) folds. The first record that
// breaks the shape (a rewind, a branch, a second root, a reused uuid)
// returns false, and the stepper recomputes from the bytes from then on.
type incremental struct {
	n     int          // records folded
	last  *qwen.Record // the last of them
	evs   []events.Event
	uuids uuidSet
	acc   *apihistory.Fold
	attr  *attribution.Fold
	key   attrKey
	// neutral is the target-free fold of the records so far: a new key's
	// fold is forked from it, not rebuilt (ADR 0035).
	neutral *attribution.Neutral
	// rewalk, when set, reads the records so far again for a fold the
	// neutral one cannot fork, and evs is not kept (a streamed replay).
	rewalk func(n int, yield func(events.Event) error) error
	err    error // rewalk's first error
	// tree, when set, follows the active chain and folds it here (a
	// streamed replay of a session that may rewind): add then only counts;
	// slot is this fold's in the tree's marks.
	tree *chainTree
	slot int
}

// attrKey is what the attribution fold was seeded with.
type attrKey struct {
	ok     bool
	target string
	marker string
	at     float64
}

func newIncremental() *incremental {
	return &incremental{acc: apihistory.New(apihistory.Options{}), neutral: attribution.NewNeutral()}
}

// add folds the next transcript event; false means the transcript is no
// longer one linear chain.
func (in *incremental) add(ev events.Event) bool {
	if in.tree != nil {
		return true // the tree folded it (addChain)
	}
	rec, ok := ev.Body.(*qwen.Record)
	if !ok || !qwen.IsConversationRecord(rec) {
		return false
	}
	if in.last == nil {
		if rec.ParentUUID != "" {
			return false
		}
	} else if rec.ParentUUID == "" || rec.ParentUUID != in.last.UUID {
		return false
	}
	if !in.uuids.add(rec.UUID) {
		return false
	}
	return in.addChain(ev) == nil
}

// addChain folds ev, the active chain's next record.
func (in *incremental) addChain(ev events.Event) error {
	rec, _ := ev.Body.(*qwen.Record)
	in.n, in.last = in.n+1, rec
	if in.rewalk == nil {
		in.evs = append(in.evs, ev)
	}
	if err := in.acc.Add(ev); err != nil {
		return err
	}
	if in.attr != nil {
		in.attr.Add(ev)
	}
	in.neutral.Add(ev)
	return nil
}

// incMark is a copy of the incremental folds (chainFolds).
type incMark struct {
	n       int
	last    *qwen.Record
	acc     *apihistory.Fold
	attr    *attribution.Fold
	key     attrKey
	neutral *attribution.Neutral
}

func (in *incremental) markChain() any {
	m := &incMark{n: in.n, last: in.last, acc: in.acc.Clone(), key: in.key, neutral: in.neutral.Clone()}
	if in.attr != nil {
		m.attr = in.attr.Clone()
	}
	return m
}

func (in *incremental) restoreChain(m any) {
	im := m.(*incMark)
	in.n, in.last, in.acc, in.key, in.neutral, in.attr = im.n, im.last, im.acc.Clone(), im.key, im.neutral.Clone(), nil
	if im.attr != nil {
		in.attr = im.attr.Clone()
	}
}

// states are transcriptStates' two projections for the records so far.
func (in *incremental) states(view *ledgerview.View) (string, string) {
	if in.n == 0 {
		return "empty", "no transcript"
	}
	dangling := view.Dangling()
	key := attrKey{}
	if len(dangling) > 0 {
		adm, _ := view.LatestUnsettledAdmission()
		key = attrKey{ok: true, target: dangling[0], marker: adm.TailUUID, at: adm.AtFloat()}
	}
	if key != in.key {
		in.key, in.attr = key, nil
		if key.ok {
			var ok bool
			if in.attr, ok = in.neutral.Fork(key.target, key.marker, key.at, attribution.Watch{}); !ok {
				in.attr = in.refold(key)
			}
		}
	}
	return describeFolds(in.acc, in.attr, dangling)
}

// refold is key's fold over the records so far: forked from the deepest
// mark that allows it when a chainTree keeps the folds (followed), else
// from the first record.
func (in *incremental) refold(key attrKey) *attribution.Fold {
	if in.tree != nil {
		var f *attribution.Fold
		err := in.tree.markWalk(in.slot, in.n, func(m any) bool {
			var ok bool
			f, ok = m.(*incMark).neutral.Fork(key.target, key.marker, key.at, attribution.Watch{})
			return ok
		}, func(e events.Event) error { f.Add(e); return nil })
		if err != nil {
			in.err = err
		}
		if f != nil {
			return f
		}
	}
	f := attribution.New(key.target, key.marker, key.at)
	if in.rewalk == nil {
		for _, e := range in.evs {
			f.Add(e)
		}
		return f
	}
	if err := in.rewalk(in.n, func(e events.Event) error { f.Add(e); return nil }); err != nil {
		in.err = err // the streamed replay stops on it
	}
	return f
}
