package qwen

import (
	"fmt"
	"slices"

	"github.com/tailproof/tailproof/events"
)

// ChainOf rebuilds the active chain from already decoded transcript events
// (bodies *Record) in memory, by the same rules as LoadChain and Walk, and
// returns it with its Chain summary (whose Walk is not usable: the events
// are already in hand). It is for tests and small inputs. Events with other
// bodies are ignored; RecordIndex in its diagnostics is the event index.
//
// It is the in-memory oracle the streaming passes are tested against, and
// stays exported only while cmd/tailproof's replay engine builds its chain
// with it; once replay reads the streaming chain it moves to a test file.
func ChainOf(evs []events.Event) ([]events.Event, *Chain, error) {
	c := &Chain{Streaming: false}
	type item struct {
		ev  events.Event
		rec *Record
		idx int
	}
	var items []item
	for i, ev := range evs {
		r, ok := ev.Body.(*Record)
		if !ok {
			continue
		}
		c.Objects++
		c.Records++
		if c.Records == 1 {
			c.SessionID = r.SessionID
			c.HasFirst, c.FirstSessionID, c.FirstCwd, c.FirstTS = true, r.SessionID, r.Cwd, r.Timestamp
		} else if r.SessionID != c.SessionID {
			return nil, nil, fmt.Errorf("qwen: %s: %w: %q and %q", ev.Pos, ErrMixedSessionIDs, c.SessionID, r.SessionID)
		}
		items = append(items, item{ev, r, i})
	}
	leaf := ""
	for i := len(items) - 1; i >= 0; i-- {
		if isConversation(items[i].rec) {
			leaf = items[i].rec.UUID
			break
		}
	}
	if leaf == "" {
		if c.Records > 0 {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagArtifactOnly,
				Message: "The input contains no conversation records.", RecordIndex: -1})
		}
		return nil, c, nil
	}
	c.LeafUUID = leaf
	frags := map[string][]events.Event{}
	for _, it := range items {
		if !isConversation(it.rec) {
			continue
		}
		if f, ok := frags[it.rec.UUID]; ok && !sameParent(f[0].Body.(*Record), it.rec) {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagConflictingParent,
				Message: "Duplicate transcript record fragments disagree on parentUuid.", AffectsCompleteness: true,
				RecordIndex: it.idx, RecordID: it.rec.UUID, Path: "parentUuid"})
		}
		frags[it.rec.UUID] = append(frags[it.rec.UUID], it.ev)
	}
	var uuids []string
	visited := map[string]bool{}
	for cur := leaf; cur != ""; {
		if visited[cur] {
			c.Cycle = cur
			break
		}
		visited[cur] = true
		uuids = append(uuids, cur)
		parent := frags[cur][0].Body.(*Record).ParentUUID
		if parent == "" {
			break
		}
		if _, ok := frags[parent]; !ok {
			c.Gaps = append(c.Gaps, Gap{ChildUUID: cur, MissingParentUUID: parent})
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagHistoryGap,
				Message: "The active transcript chain is missing a parent record.", AffectsCompleteness: true,
				RecordIndex: -1, RecordID: cur})
			break
		}
		cur = parent
	}
	if c.Cycle != "" {
		c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagParentCycle,
			Message: "The active transcript chain contains a parent cycle.", AffectsCompleteness: true,
			RecordIndex: -1, RecordID: c.Cycle})
	}
	slices.Reverse(uuids)
	out := make([]events.Event, 0, len(uuids))
	for _, u := range uuids {
		fs := frags[u]
		out = append(out, Envelope(aggregate(fs), fs[0].Pos))
	}
	c.Len = len(out)
	return out, c, nil
}

func sameParent(a, b *Record) bool {
	return a.ParentUUID == b.ParentUUID && a.ParentNull == b.ParentNull
}
