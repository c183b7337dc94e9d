package bus

import (
	"errors"
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/tailproof/tailproof/events"
)

// Metadata keys every record message carries. A third-party source sets the
// same keys so Source can type its lines.
const (
	MetaStream  = "tailproof_stream"  // events.Stream of the line ("transcript", "ledger", "session_log", …)
	MetaSession = "tailproof_session" // the session id the line belongs to
	MetaLine    = "tailproof_line"    // 1-based physical line number
	MetaOffset  = "tailproof_offset"  // byte offset at which the line starts
	MetaNext    = "tailproof_next"    // byte offset just past the line's newline: the resume point after Ack
	MetaCodec   = "tailproof_codec"   // optional codec name overriding the stream's default codec
	MetaPath    = "tailproof_path"    // the file a tailed line was read from (informational)
	MetaCause   = "tailproof_cause"   // on a decision: the uuid of the load event that caused it
)

// ErrBadMessage classifies a message Source cannot turn into events: missing
// or malformed metadata, or a payload its codec refuses.
var ErrBadMessage = errors.New("bad message")

// NewRecordMessage builds the message a source publishes for one record line:
// payload = the line without its newline, metadata = stream, session and
// position. uuid should be stable for the line (for example
// "<session>:<stream>:<offset>") so a redelivery deduplicates.
func NewRecordMessage(uuid string, stream events.Stream, session string, pos events.Position, line []byte) *message.Message {
	m := message.NewMessage(uuid, append([]byte(nil), line...))
	m.Metadata.Set(MetaStream, string(stream))
	m.Metadata.Set(MetaSession, session)
	m.Metadata.Set(MetaLine, strconv.Itoa(pos.Line))
	m.Metadata.Set(MetaOffset, strconv.FormatInt(pos.Offset, 10))
	return m
}

// Position reads the line position from a message's metadata.
func Position(m *message.Message) (events.Position, error) {
	var p events.Position
	line, err := strconv.Atoi(m.Metadata.Get(MetaLine))
	if err != nil || line < 1 {
		return p, errors.Join(ErrBadMessage, errors.New("bus: metadata "+MetaLine+" is not a positive line number: "+strconv.Quote(m.Metadata.Get(MetaLine))))
	}
	off, err := strconv.ParseInt(m.Metadata.Get(MetaOffset), 10, 64)
	if err != nil || off < 0 {
		return p, errors.Join(ErrBadMessage, errors.New("bus: metadata "+MetaOffset+" is not a byte offset: "+strconv.Quote(m.Metadata.Get(MetaOffset))))
	}
	return events.Position{Line: line, Offset: off}, nil
}
