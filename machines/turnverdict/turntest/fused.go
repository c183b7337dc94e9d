package turntest

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// SameFused fails tb unless events.Decode gives the same events and errors
// for data with the fused line read (the default for an
// events.FusedCodec) as with every line framed first (events.Options
// NoFuse): positions, kinds, every exported field of each body, and each
// error's text and class. The fused read is also run through readers that
// return a byte or half the request at a time, so that lines fall across
// the reader's buffer at every place.
func SameFused(tb testing.TB, h turn.Harness, data []byte) {
	tb.Helper()
	framed := h.Options
	framed.NoFuse = true
	want := decodeText(bytes.NewReader(data), h.Codec, framed)
	readers := map[string]io.Reader{
		"whole":   bytes.NewReader(data),
		"dataerr": iotest.DataErrReader(bytes.NewReader(data)),
	}
	if len(data) <= 4<<20 { // a too-long-line input runs to 64 MiB
		readers["half"] = iotest.HalfReader(bytes.NewReader(data))
	}
	if len(data) <= 64<<10 {
		readers["byte"] = iotest.OneByteReader(bytes.NewReader(data))
	}
	for name, r := range readers {
		if got := decodeText(r, h.Codec, h.Options); got != want {
			tb.Fatalf("%s reader: fused read differs from framed\nfused:\n%s\nframed:\n%s", name, got, want)
		}
	}
}

func decodeText(r io.Reader, c events.Codec, o events.Options) string {
	var b strings.Builder
	for ev, err := range events.Decode(r, c, o) {
		if err != nil {
			b.WriteString(describeErr(err))
			if e, ok := err.(*events.Error); ok && e.Unterminated {
				b.WriteString(" (unterminated)")
			}
			b.WriteString("\n")
			continue
		}
		body, jerr := json.Marshal(ev.Body)
		if jerr != nil {
			body = []byte(jerr.Error())
		}
		b.WriteString(ev.Pos.String() + " " + strconv.FormatInt(ev.Time.Ms, 10) + " " + string(ev.Kind) + " " +
			ev.UUID + "<" + ev.ParentUUID + " " + ev.Body.Describe() + " " + string(body) + "\n")
	}
	return b.String()
}
