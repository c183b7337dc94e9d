package qwen

import (
	"encoding/binary"
	"math/bits"
)

// Member keys recognised in one step. A record holds about fifteen keys; read
// as a string, decoded, then matched by a string switch, each cost ~160
// instructions (callgrind, Go's source tree as tool outputs), a tenth of a
// reconcile. A key the parsers read is plain ASCII of at most 16 bytes, so
// its two words and its length name it: keyIn loads them where the key lies
// and looks them up in a small table. Only a key that is not plain (an
// escape, a control byte) or is longer than 16 bytes takes the string path,
// and its decoded bytes are looked up in the same table, so an escaped
// spelling of a known key ("\u0075uid") is still that key, as in JSON.parse.
// ADR 0042's amendment of 2026-12-02 (afternoon) has the figures.

// keyTable maps each of a fixed set of keys (each 1–16 bytes) to its index
// in the set plus one; any other key is 0.
type keyTable struct {
	mul   uint64 // the multiplier that gives every key its own slot
	slots [keySlots]keySlot
}

type keySlot struct {
	w0, w1 uint64 // the key's bytes, little-endian, zero past its end
	n      int
	id     int
}

const keySlots = 64

// newKeyTable builds the table of keys, searching for a multiplier that
// puts each in its own slot. It panics when a key is empty, over 16 bytes
// or repeated, or no multiplier is found: the tables are package variables,
// so that shows at init, in every test.
func newKeyTable(keys ...string) *keyTable {
	for mul := uint64(0x9E3779B97F4A7C15); mul != 0x9E3779B97F4A7C15+2<<20; mul += 2 {
		t := &keyTable{mul: mul}
		ok := true
		for k, key := range keys {
			if len(key) == 0 || len(key) > 16 {
				panic("qwen: key table: key " + key + " is not 1-16 bytes")
			}
			w0, w1 := keyWords([]byte(key))
			sl := &t.slots[t.slot(w0, w1)]
			if sl.n != 0 {
				if sl.w0 == w0 && sl.w1 == w1 && sl.n == len(key) {
					panic("qwen: key table: " + key + " twice")
				}
				ok = false
				break
			}
			*sl = keySlot{w0: w0, w1: w1, n: len(key), id: k + 1}
		}
		if ok {
			return t
		}
	}
	panic("qwen: key table: no multiplier")
}

// keyWords is a key's bytes as two little-endian words, zero past its end
// (only the first 16 bytes).
func keyWords(k []byte) (w0, w1 uint64) {
	var buf [16]byte
	copy(buf[:], k)
	return binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])
}

// slot hashes the words only: a key and its extension by NULs (a decoded
// \u0000) share a slot, and the length tells them apart.
func (t *keyTable) slot(w0, w1 uint64) int {
	return int(((w0 ^ bits.RotateLeft64(w1, 29)) * t.mul) >> (64 - 6))
}

// lookup is the id of the key of n bytes whose words are w0, w1 (zero past
// its end); 0 when it is none of the table's.
func (t *keyTable) lookup(w0, w1 uint64, n int) int {
	sl := &t.slots[t.slot(w0, w1)]
	if sl.w0 == w0 && sl.w1 == w1 && sl.n == n {
		return sl.id
	}
	return 0
}

// find is lookup by the key's decoded bytes.
func (t *keyTable) find(k []byte) int {
	if len(k) == 0 || len(k) > 16 {
		return 0
	}
	w0, w1 := keyWords(k)
	return t.lookup(w0, w1, len(k))
}

// keyIn scans an object key and its colon, as key does, and returns the
// key's id in t. The key is read where it lies when it is plain (no
// backslash or control byte) and under 17 bytes with 18 bytes of input
// from its quote; else by key, and its decoded bytes are looked up.
//
// Only the first quote is searched for (one test a word, not stopMask's
// two): when the bytes before it are one of t's keys, which hold no
// backslash or control byte, they are the whole key. Only a key that is
// none of t's is then checked for a backslash or control byte before its
// quote.
func (s *scanner) keyIn(t *keyTable) (int, bool) {
	if i := s.i; i+18 <= len(s.b) {
		k := s.b[i : i+18]
		o0 := binary.LittleEndian.Uint64(k[1:9])
		o1 := binary.LittleEndian.Uint64(k[9:17])
		w0, w1, n := o0, o1, 16
		if m := quoteMask(w0); m != 0 {
			n = bits.TrailingZeros64(m) >> 3 // the lowest flag is exact
			w0 &= 1<<(8*uint(n)) - 1
			w1 = 0
		} else if m := quoteMask(w1); m != 0 {
			n = 8 + bits.TrailingZeros64(m)>>3
			w1 &= 1<<(8*uint(n-8)) - 1
		}
		if k[0] == '"' && k[1+n] == '"' {
			id := t.lookup(w0, w1, n)
			if id != 0 || firstStop(o0, o1) == n {
				// A key of t, or plain: no stop before the quote.
				s.i = i + 2 + n
				if s.peek() != ':' {
					return 0, s.fail("expected :")
				}
				s.i++
				return id, true
			}
		}
	}
	k, ok := s.key()
	if !ok {
		return 0, false
	}
	return t.find(k), true
}

// firstStop is the offset of the first quote, backslash or control byte
// in the 16 bytes of w0 and w1, or 16.
func firstStop(w0, w1 uint64) int {
	if m := stopMask(w0); m != 0 {
		return bits.TrailingZeros64(m) >> 3
	}
	if m := stopMask(w1); m != 0 {
		return 8 + bits.TrailingZeros64(m)>>3
	}
	return 16
}

// quoteMask flags (high bit of the byte) the quotes of w; only the lowest
// flag is exact (a borrow may flag bytes above it).
func quoteMask(w uint64) uint64 {
	x := w ^ (lsb * '"')
	return (x - lsb) &^ x & msb
}

// objectIn is object for the members of keys in t: f gets each member's id
// (0 for any other key) with s.i at the value, and must consume the value.
func (s *scanner) objectIn(t *keyTable, f func(id int) bool) bool {
	if s.peek() != '{' {
		return s.fail("expected object")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		id, ok := s.keyIn(t)
		if !ok || !f(id) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			if s.i >= len(s.b) {
				return s.fail("unexpected end of input")
			}
			return s.fail("expected , or }")
		}
	}
}

// The keys of a chat record that parseObject reads, by id (0: any other).
const (
	kOther = iota
	kUUID
	kParentUUID
	kSessionID
	kTimestamp
	kType
	kSubtype
	kProvenance
	kPromptID
	kDaemonPromptID
	kCwd
	kDeliveredTurn
	kBackgroundTurn
	kSystemPayload
	kGoalContext
	kVersion
	kUsageMetadata
	kToolCallResult
	kMessage
	numRecordKeys
)

var recordKeyNames = [numRecordKeys]string{
	kUUID: "uuid", kParentUUID: "parentUuid", kSessionID: "sessionId", kTimestamp: "timestamp",
	kType: "type", kSubtype: "subtype", kProvenance: "provenance", kPromptID: "promptId",
	kDaemonPromptID: "daemonPromptId", kCwd: "cwd", kDeliveredTurn: "deliveredTurn",
	kBackgroundTurn: "backgroundTurn", kSystemPayload: "systemPayload", kGoalContext: "goalContext",
	kVersion: "version", kUsageMetadata: "usageMetadata", kToolCallResult: "toolCallResult",
	kMessage: "message",
}

// The keys of a Gemini Content object, of one of its parts, and of a
// part's functionCall or functionResponse.
const (
	kRole = 1 + iota
	kParts
)

const (
	kText = 1 + iota
	kThought
	kFunctionCall
	kFunctionResponse
	kInlineData
	kFileData
)

const (
	kID = 1 + iota
	kName
)

var (
	recordKeys  = newKeyTable(recordKeyNames[1:]...)
	contentKeys = newKeyTable("role", "parts")
	partKeys    = newKeyTable("text", "thought", "functionCall", "functionResponse", "inlineData", "fileData")
	callKeys    = newKeyTable("id", "name")
)
