package tailproof

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/recovery"
)

// ErrPayloadMoved classifies a transcript whose record behind a printed part
// is no longer where the walk found it (the file changed between the two
// reads): the status cannot show that part's exact bytes.
var ErrPayloadMoved = errors.New("transcript changed under status: a resent part's record moved")

// fillPayloads gives the plan's printed parts their exact JSON (Part.Raw).
// Status walks the chain without payloads, as Reconcile does — the decision
// never reads them, and keeping them for the whole window of entries made
// status hold several times reconcile's memory on large tool outputs — and
// then reads back only the records the printed parts came from, in file
// order, each from its recorded offset to its line's end, decoded with
// payloads. A record's parts are matched to the plan's in order by every
// decoded field but Raw: the plan keeps a record's parts in record order, and
// two parts that decode alike get the same treatment, so they land in the
// same list in the same order.
func fillPayloads(ctx context.Context, store adapters.TranscriptStore, sid string, st *recovery.Status, maxLine int) error {
	type ref struct {
		part *qwen.Part
		uuid string
		sub  string
	}
	byOffset := map[int64][]ref{}
	add := func(p *qwen.Part, uuid, sub string, off int64) {
		if uuid != "" && len(p.Raw) == 0 {
			byOffset[off] = append(byOffset[off], ref{p, uuid, sub})
		}
	}
	for i := range st.Resend {
		r := &st.Resend[i]
		add(&r.Part, r.Source.UUID, r.Source.Subtype, r.Source.Pos.Offset)
	}
	for i := range st.Excluded {
		x := &st.Excluded[i]
		add(&x.Part, x.Source.UUID, x.Source.Subtype, x.Source.Pos.Offset)
	}
	if len(byOffset) == 0 {
		return nil
	}
	if maxLine <= 0 {
		maxLine = events.DefaultMaxLineBytes
	}
	offsets := make([]int64, 0, len(byOffset))
	for off := range byOffset {
		offsets = append(offsets, off)
	}
	slices.Sort(offsets)
	rc, err := store.OpenTranscript(ctx, sid)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	var at, lastStart int64 // bytes consumed; where the last line read starts
	var last []byte
	codec := qwen.Codec{Opts: qwen.DecodeOptions{KeepPayloads: true}}
	for _, off := range offsets {
		var line []byte
		if off < at { // a record glued after another on the line just read
			line = last[off-lastStart:]
		} else {
			if _, err := br.Discard(int(off - at)); err != nil {
				return fmt.Errorf("%w: offset %d: %w", ErrPayloadMoved, off, err)
			}
			l, err := readLine(br, maxLine)
			if err != nil {
				return fmt.Errorf("%w: offset %d: %w", ErrPayloadMoved, off, err)
			}
			line, last, lastStart, at = l, l, off, off+int64(len(l))
		}
		refs := byOffset[off]
		evs, _ := codec.DecodeLine(nil, events.Line{Bytes: bytes.TrimRight(line, "\r\n"), Pos: events.Position{Offset: off}})
		var rec *qwen.Record
		for _, e := range evs {
			if r, ok := e.Body.(*qwen.Record); ok && r.UUID == refs[0].uuid && e.Pos.Offset == off {
				rec = r
				break
			}
		}
		if rec == nil {
			return fmt.Errorf("%w: no record %s at offset %d", ErrPayloadMoved, refs[0].uuid, off)
		}
		parts := recordParts(rec)
		cursor := map[bool]int{} // per list: Resend (true) and Excluded (false)
		for _, r := range refs {
			resend := isResend(st, r.part)
			j := cursor[resend]
			for j < len(parts) && !sameDecoded(parts[j], *r.part) {
				j++
			}
			if j == len(parts) {
				return fmt.Errorf("%w: record %s at offset %d has no part %s", ErrPayloadMoved, r.uuid, off, r.part.Describe())
			}
			r.part.Raw = parts[j].Raw
			cursor[resend] = j + 1
		}
	}
	return nil
}

// recordParts are the parts a record contributes to the history, in order:
// its message's, or a compression's compressed history's.
func recordParts(rec *qwen.Record) []qwen.Part {
	if rec.Subtype == qwen.SubtypeChatCompression && rec.Compression != nil {
		var out []qwen.Part
		for _, c := range rec.Compression.History {
			out = append(out, c.Parts...)
		}
		return out
	}
	if rec.Message == nil {
		return nil
	}
	return rec.Message.Parts
}

func isResend(st *recovery.Status, p *qwen.Part) bool {
	for i := range st.Resend {
		if &st.Resend[i].Part == p {
			return true
		}
	}
	return false
}

func sameDecoded(a, b qwen.Part) bool {
	return a.Kind == b.Kind && a.Text == b.Text && a.Thought == b.Thought && a.ID == b.ID && a.HasID == b.HasID &&
		a.Name == b.Name && a.HasName == b.HasName && a.HasText == b.HasText && a.OnlyText == b.OnlyText
}

// readLine reads through the next newline (or the end), refusing more than
// max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, events.ErrLineTooLong
		}
		switch {
		case err == nil, errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}
