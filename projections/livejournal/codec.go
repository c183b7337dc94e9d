package livejournal

import (
	"strconv"

	"github.com/tailproof/tailproof/events"
)

// CodecName is the name the daemon event codec registers under.
const CodecName = "daemon"

// KindOf returns the envelope Kind of a daemon event type: "daemon.<type>".
func KindOf(typ string) events.Kind { return events.Kind(CodecName + "." + typ) }

// Codec decodes recorded daemon event streams (one wire event per line) into
// the shared envelope, so a recorded live stream replays through
// events.Decode like every other source. Each event's Body is its *Event.
type Codec struct{}

// Name implements events.Codec.
func (Codec) Name() string { return CodecName }

// Stream implements events.Codec.
func (Codec) Stream() events.Stream { return events.StreamLiveJournal }

// DecodeLine implements events.Codec. An empty line holds no event.
func (Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	if len(line.Bytes) == 0 {
		return dst, nil
	}
	ev, err := DecodeEvent(line.Bytes)
	if err != nil {
		return dst, err
	}
	return append(dst, ev.Envelope(line.Pos)), nil
}

// Envelope wraps the event in the shared envelope at pos. The daemon event id
// is the record identity; daemon events carry no provenance field, so none is
// claimed.
func (e *Event) Envelope(pos events.Position) events.Event {
	env := events.Event{Stream: events.StreamLiveJournal, Pos: pos, Kind: KindOf(e.Type), Body: e}
	if e.ID > 0 {
		env.UUID = strconv.FormatInt(e.ID, 10)
	}
	return env
}
