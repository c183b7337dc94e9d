package attribution

import (
	"maps"
	"slices"
)

// Clone returns an independent copy of the fold: adding records to either
// never changes the other's evidence (a replay keeps clones at points of
// the active chain and folds on from one at a rewind; ADR 0035,
// 2026-12-01 night). The saved fold (the turn's end) is shared: nothing
// writes to it once it is taken.
func (f *Fold) Clone() *Fold {
	cp := *f
	cp.absence.named = maps.Clone(f.absence.named)
	cp.absence.calls = slices.Clip(f.absence.calls)
	return &cp
}

// Clone returns an independent copy of the target-free fold.
func (n *Neutral) Clone() *Neutral {
	cp := *n
	cp.fold = n.fold.Clone()
	cp.ids = maps.Clone(n.ids)
	cp.uuids = maps.Clone(n.uuids)
	cp.prompt = slices.Clip(n.prompt)
	return &cp
}
