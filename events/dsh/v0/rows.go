package v0

import (
	"fmt"

	"github.com/tailproof/tailproof/events"
)

// HasData reports the data member is present (a row member always has one).
func (r Record) HasData() bool { return r.Data != nil || r.member != nil }

// malformed is dsh's uniform diagnostic: `malformed <tag> storage row: <why>`.
func malformed(tag, why string) error {
	return fmt.Errorf("%w: %s: %s: %w", ErrMalformedRow, tag, why, events.ErrCorrupt)
}

// expandRow validates a row-tagged value the way dsh-session 0.1.0-rc.8's
// validateRow does (exact keys, number and string types, dt arity, safe
// member seqs and times) and appends its members.
func (p *Parser) expandRow(dst []Record, tag string, ms []member) ([]Record, error) {
	if !exactKeys(ms, "type", "seq0", "time0", "data") {
		return dst, malformed(tag, "envelope must be exactly {type, seq0, time0, data}")
	}
	seq0v, _ := last(ms, "seq0")
	seq0, ok := number(seq0v)
	if !ok || !safeInteger(seq0) || seq0 < 0 {
		return dst, malformed(tag, "seq0 must be a non-negative safe integer")
	}
	time0v, _ := last(ms, "time0")
	time0, ok := number(time0v)
	if !ok || !safeInteger(time0) {
		return dst, malformed(tag, "time0 must be a safe integer")
	}
	dataRaw, _ := last(ms, "data")
	// The line is validated: split data without validating it again.
	data, isObj := Object(p.data[:0], dataRaw)
	p.data = data
	if !isObj {
		// isRecord: any object, arrays included; an array has none of the keys.
		if len(dataRaw) > 0 && dataRaw[0] == '[' {
			return dst, malformed(tag, dataKeysWhy(tag))
		}
		return dst, malformed(tag, "data must be an object")
	}
	m := &rowMember{}
	payloadKey := "texts"
	switch tag {
	case TagToolCallChunks:
		withName := exactKeys(data, "turn", "step", "index", "id", "name", "dt", "args")
		if !withName && !exactKeys(data, "turn", "step", "index", "id", "dt", "args") {
			return dst, malformed(tag, dataKeysWhy(tag))
		}
		id, _ := last(data, "id")
		if _, ok := str(id); !ok {
			return dst, malformed(tag, "id (and name when present) must be strings")
		}
		m.id = id
		if withName {
			name, _ := last(data, "name")
			if _, ok := str(name); !ok {
				return dst, malformed(tag, "id (and name when present) must be strings")
			}
			m.name = name
		}
		m.chunkType, payloadKey = "tool-call-delta", "args"
	case TagTextChunks, TagReasoningChunks:
		if !exactKeys(data, "turn", "step", "index", "dt", "texts") {
			return dst, malformed(tag, dataKeysWhy(tag))
		}
		m.chunkType = "text-delta"
		if tag == TagReasoningChunks {
			m.chunkType = "reasoning-delta"
		}
	}
	m.turn, _ = last(data, "turn")
	m.step, _ = last(data, "step")
	m.idx, _ = last(data, "index")
	for _, v := range [][]byte{m.turn, m.step, m.idx} {
		if _, ok := number(v); !ok {
			return dst, malformed(tag, "turn/step/index must be numbers")
		}
	}
	payloadRaw, _ := last(data, payloadKey)
	payload, ok := stringArray(p.payload[:0], payloadRaw)
	p.payload = payload
	if !ok || len(payload) == 0 {
		return dst, malformed(tag, payloadKey+" must be a non-empty string array")
	}
	dtRaw, _ := last(data, "dt")
	dts, ok := array(p.dts[:0], dtRaw)
	p.dts = dts
	if !ok {
		return dst, malformed(tag, "dt must be an array of safe integers")
	}
	gaps := p.gaps[:0]
	for _, g := range dts {
		v, ok := number(g)
		if !ok || !safeInteger(v) {
			return dst, malformed(tag, "dt must be an array of safe integers")
		}
		gaps = append(gaps, v)
	}
	p.gaps = gaps
	return expandMembers(dst, tag, seq0, time0, m, payload, gaps)
}

// expandMembers is the end of validateRow and the expansion, shared by the
// general row path and the compact one (fast.go): dt's arity, the members'
// safe seqs and times (rowRun.check), then one Record per payload element.
// gaps are dt's safe integers.
func expandMembers(dst []Record, tag string, seq0, time0 float64, m *rowMember, payload [][]byte, gaps []float64) ([]Record, error) {
	r := rowRun{seq0: seq0, time0: time0, m: m, payload: payload, gaps: gaps}
	if err := r.check(tag); err != nil {
		return dst, err
	}
	return r.expand(dst), nil
}

// check is the end of validateRow for a row of safe-integer seq0 and time0
// and safe-integer gaps: dt's arity and every member's seq and time safe.
func (r *rowRun) check(tag string) error {
	if len(r.gaps) != len(r.payload)-1 {
		return malformed(tag, fmt.Sprintf("dt length %d does not match %d members", len(r.gaps), len(r.payload)))
	}
	if !safeInteger(r.seq0 + float64(len(r.payload)-1)) {
		return malformed(tag, "member seqs must stay safe integers")
	}
	t := r.time0
	for _, g := range r.gaps {
		if t += g; !safeInteger(t) {
			return malformed(tag, "member times must stay safe integers")
		}
	}
	return nil
}

func dataKeysWhy(tag string) string {
	if tag == TagToolCallChunks {
		return "data must be exactly {turn, step, index, id, name?, dt, args}"
	}
	return "data must be exactly {turn, step, index, dt, texts}"
}

// array appends the raw elements of a raw JSON array to out; ok is false for
// any other value. raw is already validated.
func array(out [][]byte, raw []byte) ([][]byte, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return out, false
	}
	i := skipSpaceAt(raw, 1)
	if raw[i] == ']' {
		return out, true
	}
	for {
		end := valueEnd(raw, i)
		out = append(out, raw[i:end])
		i = skipSpaceAt(raw, end)
		if raw[i] == ']' {
			return out, true
		}
		i = skipSpaceAt(raw, i+1) // the comma
	}
}

func stringArray(out [][]byte, raw []byte) ([][]byte, bool) {
	elems, ok := array(out, raw)
	if !ok {
		return nil, false
	}
	for _, e := range elems {
		if e[0] != '"' {
			return nil, false
		}
	}
	return elems, true
}
