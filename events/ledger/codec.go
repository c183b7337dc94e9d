package ledger

import (
	"bytes"

	"github.com/tailproof/tailproof/events"
)

// Codec is the events.Codec for ledger lines. Kinds: "ledger.in_flight",
// "ledger.terminal". Records carry no uuid; Time is the record's `at`.
type Codec struct{}

func (Codec) Name() string          { return "qwen-ledger" }
func (Codec) Stream() events.Stream { return events.StreamLedger }

func (Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	if len(bytes.TrimSpace(line.Bytes)) == 0 {
		return dst, nil
	}
	r, err := Decode(line.Bytes)
	if err != nil {
		return dst, err
	}
	kind := events.Kind("ledger.terminal")
	if r.InFlight {
		kind = "ledger.in_flight"
	}
	return append(dst, events.Event{Stream: events.StreamLedger, Pos: line.Pos,
		Time: events.Time{Ms: r.At, OK: true}, Kind: kind, Body: r}), nil
}
