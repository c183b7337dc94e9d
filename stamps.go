package tailproof

import (
	"iter"

	"github.com/tailproof/tailproof/events/ledger"
)

// Stamps are the terminals of one ReconcileTurns run, in file order, held
// compactly: the offset of the turn's key in the run's key set and the index
// of its shape — the record with its key cleared, interned — 8 bytes a turn
// beside the key the run already holds, where a ledger.Record is 136 and its
// encoded line about 120. Every terminal of a run carries the same time
// (TurnReconcileOptions.Now), so a run has a handful of shapes (completed,
// daemon_lost, the harness's own end reasons). The zero Stamps is empty.
type Stamps struct {
	keys   *keySet
	stamps []stamp
	shapes []ledger.Record
	index  map[ledger.Record]uint32
}

type stamp struct{ key, shape uint32 }

func (s *Stamps) add(key uint32, rec ledger.Record) {
	rec.PromptID = ""
	i, ok := s.index[rec]
	if !ok {
		if s.index == nil {
			s.index = map[ledger.Record]uint32{}
		}
		i = uint32(len(s.shapes))
		s.shapes = append(s.shapes, rec)
		s.index[rec] = i
	}
	s.stamps = append(s.stamps, stamp{key: key, shape: i})
}

// Len is how many terminals there are.
func (s *Stamps) Len() int { return len(s.stamps) }

// At is the i-th terminal (0 ≤ i < Len).
func (s *Stamps) At(i int) ledger.Record {
	r := s.shapes[s.stamps[i].shape]
	r.PromptID = string(s.keys.keyBytes(s.stamps[i].key))
	return r
}

// All yields the terminals in file order.
func (s *Stamps) All() iter.Seq[ledger.Record] {
	return func(yield func(ledger.Record) bool) {
		for i := range s.stamps {
			if !yield(s.At(i)) {
				return
			}
		}
	}
}

// Lines yields the terminals' ledger lines (ledger.Encode), in file order,
// for one durable append (jsonl.FilesStore.AppendLedgerSeq). A yielded
// slice is valid until the next one; the sequence may be ranged over again.
func (s *Stamps) Lines() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for i := range s.stamps {
			if !yield(ledger.Encode(s.At(i))) {
				return
			}
		}
	}
}
