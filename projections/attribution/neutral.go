package attribution

import (
	"hash/maphash"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// Neutral is a target-free fold of the active chain: the state any Fold
// would have after the same records, had nothing in them named its target
// and nothing been "after" its admission yet. A prompt admitted now starts
// its fold as a Fork of it instead of a fold from the chain's first record,
// so a replay that decides every crash point folds the chain once (ADR 0035).
//
// Before a target's admission, a Fold's state depends on the target only
// where a record names it (its prompt record's daemonPromptId, a
// turn_result's promptId), on its marker only where a record carries that
// uuid, on its admission clock only where a record is stamped at or after
// it (no marker), and on a watched predecessor window only through prompt
// records' clocks. Neutral keeps what tells those cases apart — hashes of
// the ids and uuids seen, the latest clock, the prompt records' clocks —
// and Fork refuses (false) whenever the prefix could have folded
// differently for the fork's arguments; the caller then folds from the
// start. Hashes only ever make Fork refuse: a collision reads as "seen".
//
// Whoever adds state to Fold that a record folds differently for different
// targets, markers or clocks before the admission must teach Fork about it
// (the differential tests of replay --crash-at all compare every crash
// point with a fold from the start).
type Neutral struct {
	fold   *Fold
	seed   maphash.Seed
	ids    map[uint64]struct{} // daemonPromptIds and turn_result promptIds seen
	uuids  map[uint64]struct{} // record uuids seen
	last   string              // the last record's uuid
	n      int                 // records folded
	maxMs  int64               // the latest clock of a stamped record
	hasMs  bool
	prompt []int64 // clocks of the stamped prompt records (IsPromptRecord)
	broken bool    // a record named the neutral fold's own target or marker, or a uuid repeated
}

// The neutral fold's own target and marker: strings no Qwen writer
// produces; a record carrying either breaks the Neutral (Fork refuses).
const (
	neutralTarget = "\x00tailproof-neutral-target"
	neutralMarker = "\x00tailproof-neutral-marker"
)

// NewNeutral starts a target-free fold of an empty chain.
func NewNeutral() *Neutral {
	return &Neutral{fold: New(neutralTarget, neutralMarker, 0), seed: maphash.MakeSeed(),
		ids: map[uint64]struct{}{}, uuids: map[uint64]struct{}{}}
}

func (n *Neutral) hash(s string) uint64 { return maphash.String(n.seed, s) }

// Add folds the next chain record, as Fold.Add does.
func (n *Neutral) Add(ev events.Event) {
	rec, ok := ev.Body.(*qwen.Record)
	if !ok {
		n.fold.Add(ev)
		return
	}
	for _, id := range [2]string{rec.DaemonPromptID, turnResultID(rec)} {
		if id == neutralTarget {
			n.broken = true
		}
		if id != "" {
			n.ids[n.hash(id)] = struct{}{}
		}
	}
	if rec.UUID == neutralMarker {
		n.broken = true
	}
	h := n.hash(rec.UUID)
	if _, dup := n.uuids[h]; dup {
		n.broken = true
	}
	n.uuids[h] = struct{}{}
	n.last = rec.UUID
	n.n++
	if rec.TimeOK {
		if !n.hasMs || rec.TimeMs > n.maxMs {
			n.maxMs, n.hasMs = rec.TimeMs, true
		}
		if IsPromptRecord(rec) {
			n.prompt = append(n.prompt, rec.TimeMs)
		}
	}
	n.fold.Add(ev)
}

func turnResultID(rec *qwen.Record) string {
	if rec.TurnResult == nil {
		return ""
	}
	return rec.TurnResult.PromptID
}

// Len is the number of records folded.
func (n *Neutral) Len() int { return n.n }

// Watch is a completed predecessor's [admission, terminal] clock span for
// Fork (Fold.WatchPredecessor).
type Watch struct {
	On       bool
	From, To float64
}

// Fork returns the Fold that New(target, markerUUID, at) — then
// WatchPredecessor(w.From, w.To) when w.On — would be after the records
// folded so far, or false when the prefix could have folded differently
// for these arguments: target is empty or a record named it, the marker is on the chain
// but not its last record, or (no marker) a record is stamped at or after
// at.
func (n *Neutral) Fork(target, markerUUID string, at float64, w Watch) (*Fold, bool) {
	if n.broken || target == "" { // "" is every unnamed record's identity
		return nil, false
	}
	if _, seen := n.ids[n.hash(target)]; seen {
		return nil, false
	}
	idx := -1
	switch {
	case markerUUID == "":
		// A marker-less admission's absence is proven over the whole chain
		// (ADR 0023, 2026-12-01: the calls before it count), which the
		// neutral fold does not track: only a fork before any record is
		// the fold from the start.
		if n.n > 0 || n.hasMs && float64(n.maxMs) >= at {
			return nil, false
		}
	case n.n > 0 && markerUUID == n.last:
		idx = n.n - 1
	default:
		if _, seen := n.uuids[n.hash(markerUUID)]; seen {
			return nil, false
		}
	}
	f := *n.fold
	f.target, f.marker, f.at = target, markerUUID, at
	f.ev.MarkerUUID, f.ev.MarkerIdx = markerUUID, idx
	if w.On {
		f.WatchPredecessor(w.From, w.To)
		for _, ms := range n.prompt {
			if float64(ms) >= w.From && float64(ms) <= w.To {
				f.ev.PredecessorShown = true
				break
			}
		}
	}
	return &f, true
}
