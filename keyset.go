package tailproof

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
)

// keySet is the set of turn keys one ReconcileTurns run keeps — the keys
// the sidecar settles and the keys the file has shown — with a few flag
// bits each, held compactly: every key's bytes once, in one arena (a flags
// byte, the length as a uvarint, the bytes), and an open-addressing table
// of arena offsets at most half full. About 10 bytes a key beside its
// bytes, where a map[string]uint8 measured 57 and a string of its own
// each; Stamps name their keys by offset into the same arena.
type keySet struct {
	arena []byte
	slots []uint32 // 0: empty; else offset+1 into arena
	n     int
	seed  maphash.Seed
}

// errTooManyKeys: the arena outgrew its 32-bit offsets (4 GiB of keys).
var errTooManyKeys = errors.New("tailproof: more than 4 GiB of turn keys in one session")

func newKeySet() *keySet { return &keySet{slots: make([]uint32, 64), seed: maphash.MakeSeed()} }

// find is the slot holding key, or the empty slot where it would go.
func (s *keySet) find(key string) (int, bool) {
	mask := uint64(len(s.slots) - 1)
	for i := maphash.String(s.seed, key) & mask; ; i = (i + 1) & mask {
		off := s.slots[i]
		if off == 0 {
			return int(i), false
		}
		if string(s.keyBytes(off-1)) == key {
			return int(i), true
		}
	}
}

// keyBytes is the key stored at arena offset off.
func (s *keySet) keyBytes(off uint32) []byte {
	n, w := binary.Uvarint(s.arena[off+1:])
	start := int(off) + 1 + w
	return s.arena[start : start+int(n)]
}

// get returns key's flags and its offset.
func (s *keySet) get(key string) (flags uint8, off uint32, ok bool) {
	i, ok := s.find(key)
	if !ok {
		return 0, 0, false
	}
	off = s.slots[i] - 1
	return s.arena[off], off, true
}

// add sets key's flags, adding the key when it is new, and returns its
// offset.
func (s *keySet) add(key string, flags uint8) (uint32, error) {
	i, ok := s.find(key)
	if ok {
		off := s.slots[i] - 1
		s.arena[off] |= flags
		return off, nil
	}
	if uint64(len(s.arena))+uint64(len(key))+binary.MaxVarintLen64+1 >= math.MaxUint32 {
		return 0, errTooManyKeys
	}
	off := uint32(len(s.arena))
	s.arena = append(s.arena, flags)
	s.arena = binary.AppendUvarint(s.arena, uint64(len(key)))
	s.arena = append(s.arena, key...)
	s.slots[i] = off + 1
	if s.n++; s.n*2 > len(s.slots) {
		s.grow()
	}
	return off, nil
}

func (s *keySet) grow() {
	old := s.slots
	s.slots = make([]uint32, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, o := range old {
		if o == 0 {
			continue
		}
		i := maphash.Bytes(s.seed, s.keyBytes(o-1)) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = o
	}
}
