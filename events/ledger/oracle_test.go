package ledger

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// decodeOracle is Decode as it was before the hand-rolled scanner: the
// encoding/json acceptance is the specification the scanner must match, so it
// stays here, in test code only, for FuzzDecodeDifferential and the benchmark.
func decodeOracle(line []byte) (Record, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Record{}, fmt.Errorf("ledger: %w: not a JSON object: %v", ErrMalformed, err)
	}
	if raw == nil {
		return Record{}, fmt.Errorf("ledger: %w: not a JSON object", ErrMalformed)
	}
	var r Record
	v, ok := oracleNumber(raw["v"])
	if !ok || v != 1 {
		return Record{}, fmt.Errorf("ledger: %w: v is not 1", ErrMalformed)
	}
	r.V = 1
	if r.PromptID, ok = oracleStr(raw["promptId"]); !ok {
		return Record{}, fmt.Errorf("ledger: %w: promptId is not a string", ErrMalformed)
	}
	at, ok := oracleNumber(raw["at"])
	if !ok {
		return Record{}, fmt.Errorf("ledger: %w: at is not a finite number", ErrMalformed)
	}
	if at == math.Trunc(at) && math.Abs(at) < 1<<53 {
		r.At = int64(at)
	} else {
		r.At, r.AtFrac, r.atRaw = int64(at), at, true
	}
	if state, _ := oracleStr(raw["state"]); state == "in_flight" {
		r.InFlight = true
		if t, ok := oracleStr(raw["tailUuid"]); ok && t != "" {
			r.TailUUID = t
		}
		return r, nil
	}
	term, _ := oracleStr(raw["terminal"])
	switch TerminalState(term) {
	case Completed, Cancelled, Error, Interrupted:
		r.Terminal = TerminalState(term)
	default:
		return Record{}, fmt.Errorf("ledger: %w: neither in_flight nor a known terminal", ErrMalformed)
	}
	if c, ok := oracleStr(raw["code"]); ok {
		r.Code, r.HasCode = c, true
	}
	if s, ok := oracleStr(raw["stopReason"]); ok {
		r.StopReason, r.HasStopReason = s, true
	}
	return r, nil
}

func oracleStr(m json.RawMessage) (string, bool) {
	if len(m) == 0 || m[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(m, &s) != nil {
		return "", false
	}
	return s, true
}

func oracleNumber(m json.RawMessage) (float64, bool) {
	if len(m) == 0 || !(m[0] == '-' || (m[0] >= '0' && m[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(m), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
