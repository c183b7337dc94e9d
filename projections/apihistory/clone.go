package apihistory

import (
	"maps"
	"slices"
)

// Clone returns an independent copy of the fold: adding records to either
// never changes what the other returns. A replay that decides every crash
// point of a session with rewinds keeps clones of the fold at points of the
// active chain and, at a rewind, folds on from the nearest one instead of
// from the chain's first record (ADR 0035, 2026-12-01 night).
//
// What is shared stays read only: the records' parts arrays (entries never
// write into them) and the last material record. Every slice the fold
// writes in place (the window's slots) or appends to is copied or clipped,
// and every map is copied. Whoever adds a map, slice or pointer field to
// Fold must copy it here (TestCloneCoversEveryField fails until then).
func (f *Fold) Clone() *Fold {
	cp := *f
	w := slices.Clip(slices.Clone(f.win))
	cp.win, cp.base, cp.off = w, w[:0], 0
	for i := range cp.win {
		s := &cp.win[i]
		s.Sources = slices.Clip(s.Sources)
		s.Content.Parts = slices.Clip(s.Content.Parts)
		s.PartSource = slices.Clip(s.PartSource)
	}
	cp.ids = maps.Clone(f.ids)
	cp.idsShown = maps.Clone(f.idsShown)
	cp.completed = maps.Clone(f.completed)
	cp.tags = maps.Clone(f.tags)
	cp.prompts = maps.Clone(f.prompts)
	cp.daemons = maps.Clone(f.daemons)
	cp.outcomes = maps.Clone(f.outcomes)
	if f.fp != nil {
		cp.fp = f.fp.clone()
	}
	return &cp
}

func (c *fpCounts) clone() *fpCounts {
	cp := *c
	cp.ring = slices.Clone(c.ring)
	cp.table = slices.Clone(c.table)
	for i := range cp.old {
		cp.old[i].words = slices.Clone(c.old[i].words)
	}
	return &cp
}
