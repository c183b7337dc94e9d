package timeline

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
)

// ErrNoEvidence is returned by Merge when a stream's bytes hold no event at
// all and something else is wrong with them (every line undecodable).
var ErrNoEvidence = errors.New("timeline: no decodable evidence")

// Source is one durable file: its bytes and the events decoded from them,
// in file order. Bad lists the lines that did not decode.
type Source struct {
	Stream events.Stream
	Data   []byte
	Events []events.Event
	Bad    []*events.Error
}

// Decode reads a stream's bytes with codec c. Undecodable lines are kept in
// Bad, never dropped silently; a reader error is returned.
func Decode(data []byte, c events.Codec, opts events.Options) (Source, error) {
	s := Source{Stream: c.Stream(), Data: data}
	for ev, err := range events.Decode(bytes.NewReader(data), c, opts) {
		if err != nil {
			var e *events.Error
			if errors.As(err, &e) {
				s.Bad = append(s.Bad, e)
				continue
			}
			return s, fmt.Errorf("timeline: decode %s: %w", c.Stream(), err)
		}
		s.Events = append(s.Events, ev)
	}
	return s, nil
}

// Ref names one event of an Evidence: its stream index (0 ledger,
// 1 transcript) and its index in that stream.
type Ref struct {
	Src   int
	Index int
}

// Evidence is a session's durable evidence merged into one sequence: the
// order in which a crash could have cut it. Ledger and transcript are two
// files written by one process, so the merge is by time; within a file,
// file order always wins.
type Evidence struct {
	Sources [2]Source
	Order   []Ref
}

// QwenEvidence decodes a Qwen ledger and transcript and merges them.
// Either may be nil (a file that does not exist yet).
func QwenEvidence(ledgerData, transcriptData []byte, maxLineBytes int) (*Evidence, error) {
	l, err := Decode(ledgerData, ledger.Codec{}, events.Options{MaxLineBytes: maxLineBytes})
	if err != nil {
		return nil, err
	}
	t, err := Decode(transcriptData, qwen.Codec{}, events.Options{MaxLineBytes: maxLineBytes})
	if err != nil {
		return nil, err
	}
	return Merge(l, t), nil
}

// DSHEvidence decodes a dsh session log (one stream: the second source is
// empty). Line 1, the header, is not an event.
func DSHEvidence(data []byte, maxLineBytes int) (*Evidence, error) {
	s, err := Decode(data, dsh.Codec{}, events.Options{MaxLineBytes: maxLineBytes, RequireNewline: true})
	if err != nil {
		return nil, err
	}
	kept := s.Events[:0]
	for _, ev := range s.Events {
		if _, ok := ev.Body.(*dsh.EventBody); ok {
			kept = append(kept, ev)
		}
	}
	s.Events = kept
	return Merge(s, Source{Stream: events.StreamTranscript}), nil
}

// Merge interleaves two sources by time. An event without a time takes the
// last time seen in its own stream. On equal times an admission (in_flight)
// goes before the transcript record it admits and any other ledger record
// after the transcript records it settles: that is the order Qwen writes them.
func Merge(a, b Source) *Evidence {
	e := &Evidence{Sources: [2]Source{a, b}}
	keys := [2][]int64{carry(a.Events), carry(b.Events)}
	i, j := 0, 0
	for i < len(a.Events) || j < len(b.Events) {
		takeA := false
		switch {
		case j >= len(b.Events):
			takeA = true
		case i >= len(a.Events):
		default:
			takeA = LedgerFirst(keys[0][i], a.Events[i].Kind, keys[1][j])
		}
		if takeA {
			e.Order = append(e.Order, Ref{0, i})
			i++
		} else {
			e.Order = append(e.Order, Ref{1, j})
			j++
		}
	}
	return e
}

// LedgerFirst is Merge's order of the next ledger event (its sort key and
// kind) and the next transcript event (its sort key): true when the ledger
// event goes first. A streaming merge of the same two files takes the same
// order with it.
func LedgerFirst(ledgerKey int64, ledgerKind events.Kind, transcriptKey int64) bool {
	return ledgerKey < transcriptKey || (ledgerKey == transcriptKey && ledgerKind == "ledger.in_flight")
}

// Carry is the sort key of an event whose stream's last key so far is last
// (minimum int64 before any): its time, or last.
func Carry(ev events.Event, last int64) int64 {
	if ev.Time.OK {
		return ev.Time.Ms
	}
	return last
}

// NoKey is the sort key before a stream's first timed event.
const NoKey = int64(-1 << 63)

// carry returns each event's sort key: its time, or the last known time of
// its stream (minimum int64 before any).
func carry(evs []events.Event) []int64 {
	keys := make([]int64, len(evs))
	last := NoKey
	for i, ev := range evs {
		last = Carry(ev, last)
		keys[i] = last
	}
	return keys
}

// Len is the number of merged events.
func (e *Evidence) Len() int { return len(e.Order) }

// Event returns merged event n (0-based).
func (e *Evidence) Event(n int) events.Event {
	r := e.Order[n]
	return e.Sources[r.Src].Events[r.Index]
}

// Cut returns each source's bytes as they would be on disk had the process
// died right after merged event n (1-based; 0 = before the first event,
// Len() = everything). A stream's cut falls where its next event starts, so
// undecodable bytes between two events stay with the earlier one, and bytes
// after the last event (a torn tail) survive only the full cut.
func (e *Evidence) Cut(n int) [2][]byte {
	if n < 0 {
		n = 0
	}
	if n > len(e.Order) {
		n = len(e.Order)
	}
	var taken [2]int
	for _, r := range e.Order[:n] {
		taken[r.Src]++
	}
	var out [2][]byte
	for s := range 2 {
		src := e.Sources[s]
		end := int64(len(src.Data))
		if taken[s] < len(src.Events) {
			end = src.Events[taken[s]].Pos.Offset
		}
		if end < 0 || end > int64(len(src.Data)) {
			end = int64(len(src.Data))
		}
		out[s] = src.Data[:end:end]
	}
	return out
}
