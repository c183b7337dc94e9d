package conformance

import (
	"encoding/json"
	"strings"
)

func (g *gen) ledgerLine(v map[string]any) {
	b, err := json.Marshal(orderedLedger(v))
	if err != nil {
		panic("conformance: ledger record does not marshal: " + err.Error())
	}
	g.ledger = append(g.ledger, string(b))
}

// orderedLedger keeps the reference writer's key order (v, promptId,
// state|terminal, tailUuid|code, stopReason, at), which encoding/json would
// otherwise sort.
type orderedLedger map[string]any

func (o orderedLedger) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for _, k := range []string{"v", "promptId", "state", "tailUuid", "terminal", "code", "stopReason", "at"} {
		v, ok := o[k]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func (g *gen) inFlight(prompt string) {
	rec := map[string]any{"v": 1, "promptId": prompt, "state": "in_flight"}
	switch x := g.r.IntN(100); {
	case x < 55 && g.tail != "":
		rec["tailUuid"] = g.tail
		g.feature("tailUuid")
	case x < 60:
		rec["tailUuid"] = "eeeeeeee-0000-4000-8000-000000000000"
		g.feature("tailUuid-absent")
	case x < 63:
		rec["tailUuid"] = ""
	}
	// The admission is stamped around the last write: before it, on the
	// same millisecond, or after it.
	at := g.clock
	switch x := g.r.IntN(100); {
	case x < 15:
		g.feature("admission-equal-ms")
	case x < 25:
		at -= int64(1 + g.r.IntN(2000))
		g.feature("admission-before-tail")
	default:
		at += int64(1 + g.r.IntN(800))
		g.clock = at
	}
	rec["at"] = at
	g.ledgerLine(rec)
}

func (g *gen) terminal(prompt string) {
	rec := map[string]any{"v": 1, "promptId": prompt}
	switch x := g.r.IntN(100); {
	case x < 50:
		rec["terminal"], rec["stopReason"] = "completed", "end_turn"
	case x < 65:
		rec["terminal"] = "cancelled"
		g.feature("terminal-cancelled")
	case x < 78:
		rec["terminal"], rec["code"] = "error", "internal_error"
		g.feature("terminal-error")
	case x < 88:
		rec["terminal"], rec["code"] = "error", "prompt_deadline_exceeded"
		g.feature("terminal-deadline")
	default:
		rec["terminal"], rec["code"] = "interrupted", "daemon_lost"
		g.feature("terminal-interrupted")
	}
	g.step()
	if g.p(0.15) {
		g.clock += int64(2000 + g.r.IntN(5000))
		g.feature("terminal-after-tail")
	}
	rec["at"] = g.clock
	g.ledgerLine(rec)
	if g.identity && g.p(0.3) {
		g.feature("turn_result")
		st := rec["terminal"].(string)
		if st == "interrupted" {
			st = "error"
		}
		g.system("turn_result", map[string]any{"promptId": prompt, "state": st, "endedAt": g.clock}, "system")
	}
}
