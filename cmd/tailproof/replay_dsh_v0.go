package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/projections/dshrecovery"
	"github.com/tailproof/tailproof/projections/timeline"
)

// Replay of dsh format v0 logs (ADR 0017). The log is decoded once into its
// logical form — the header and one line per event, rows expanded — which
// is the evidence replay steps through and cuts: a crash after event n
// leaves a raw v0 log of the first n events, recovered in memory by
// dshlog.RecoverV0 exactly as `tailproof dsh recover` would.

// dshV0Body is a v0 event as a replay step's body.
type dshV0Body struct{ rec v0.Record }

func (b *dshV0Body) Describe() string { return b.rec.Describe() }

// dshV0 is what a v0 session keeps besides its evidence.
type dshV0 struct {
	header v0.Header
}

// readDSHLog reads a dsh log named name (v1, or the published v0 raw or
// zstd, told by its content as dsh recover and status tell it:
// dshlog.SniffFormat) into a replay session. A line longer than maxLine
// bytes (<= 0: events.DefaultMaxLineBytes) stops it with a positioned
// events.ErrLineTooLong after at most one read past the limit, as replay
// reads Qwen files (readLines); a v0 zstd log is streamed to
// dshlog.ScanV0 (v0.Scan), whose frame and line bounds apply to what it
// decompresses.
func readDSHLog(name string, r io.Reader, maxLine int) (*session, error) {
	br := bufio.NewReaderSize(r, dshlog.SniffBytes)
	head, err := br.Peek(dshlog.SniffBytes)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("--dsh %s: %w", name, err)
	}
	format, err := dshlog.SniffFormat(head, filepath.Base(name))
	if err != nil {
		return nil, fmt.Errorf("--dsh %s: %w", name, err)
	}
	if format == dshlog.FormatV0Zstd {
		return newDSHV0Session(name, br, maxLine, v0.Zstd)
	}
	data, err := readLines(br, events.StreamSessionLog, maxLine)
	if err != nil {
		return nil, fmt.Errorf("--dsh %s: %w", name, err)
	}
	if format == dshlog.FormatV0Raw {
		return newDSHV0Session(name, bytes.NewReader(data), maxLine, v0.Raw)
	}
	return newDSHSession(name, data)
}

func newDSHV0Session(name string, r io.Reader, maxLine int, enc v0.Encoding) (*session, error) {
	var plain []byte
	var evs []events.Event
	res, err := dshlog.ScanV0(r, enc, v0.Options{MaxLineBytes: maxLine}, func(r *v0.Record) error {
		if plain == nil {
			plain = []byte{} // the header is written below, once it is known
		}
		line := r.AppendJSON(nil)
		c, err := v0.ParseLine(nil, line)
		if err != nil || len(c) != 1 {
			return fmt.Errorf("replay: event %s does not read back: %v", r.Describe(), err)
		}
		evs = append(evs, events.Event{
			Stream: events.StreamTranscript, Kind: events.Kind("dsh." + r.Type),
			Pos:  events.Position{Line: len(evs) + 2, Offset: int64(len(plain))},
			Time: events.Time{Ms: int64(r.Time), OK: true}, Body: &dshV0Body{rec: c[0]},
		})
		plain = append(append(plain, line...), '\n')
		return nil
	})
	if err != nil {
		return nil, err
	}
	hdr := append(v0.AppendHeader(nil, res.Header), '\n')
	for i := range evs {
		evs[i].Pos.Offset += int64(len(hdr))
	}
	src := timeline.Source{Stream: events.StreamTranscript, Data: append(hdr, plain...), Events: evs}
	return &session{name: name, dsh: true, v0: &dshV0{header: res.Header}, exists: [2]bool{true, false},
		ev: timeline.Merge(src, timeline.Source{Stream: events.StreamLedger})}, nil
}

// decideDSHV0 recovers the cut in memory, as `tailproof dsh recover` would.
func decideDSHV0(mem *memory.FS, s *session, data []byte, out outcome) outcome {
	p, err := dshlog.V0Path("/replay", s.v0.header, v0.Raw)
	if err == nil {
		err = mem.MkdirAll(filepath.Dir(p), 0o755)
	}
	if err == nil {
		err = mem.WriteFile(p, data, 0o644)
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	var fold dshrecovery.Fold
	_, scanErr := v0.ScanRecords(bytes.NewReader(data), v0.Raw, v0.Options{}, fold.Visit)
	rec, err := dshlog.RecoverV0(mem, p, v0.Options{})
	return dshV0Outcome(&fold, scanErr == nil, rec.Plan, err, true, out)
}

// dshV0Outcome fills out from RecoverV0's decision over a cut — its plan,
// or its refusal err — and the fold of the cut's events (scanned: the scan
// of the cut did not stop at a refusal); trace false leaves the trace and
// the appended lines out.
func dshV0Outcome(fold *dshrecovery.Fold, scanned bool, plan dshrecovery.Plan, err error, trace bool, out outcome) outcome {
	if scanned && trace {
		out.Trace = append(out.Trace, "fold log: "+fold.Describe())
	}
	if t, ok := fold.OpenTurn(); ok {
		out.Target = "turn " + t
	}
	if err != nil {
		out.Verdict, out.Error = "unloadable", err.Error()
		return out
	}
	out.Verdict = "balanced"
	if len(plan.Closers) > 0 {
		out.Verdict = "interrupted"
	}
	for _, c := range plan.Closers {
		if trace {
			out.Append = append(out.Append, string(c.Line))
			out.Trace = append(out.Trace, "repair: append "+c.Type)
		}
	}
	return out
}
