package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/projections/dshrecovery"
)

// A dsh log replayed without holding it (ADR 0035, amended 2026-12-02): the
// log is read twice, never kept. The first pass checks every line against
// the limit, decodes every event, counts them and the undecodable lines,
// keeping nothing, so that the second, which prints as it goes, cannot meet
// what the whole-file replay would have refused. The second pass feeds the
// same lines to the recovery state `dsh recover` uses — dshlog.V1Scanner
// for v1, dshrecovery.Fold and dshlog.DecideV0 for v0 — and reads at each
// crash point what recovery would decide had the writer died there: the
// decisions of the whole-file replay, which recovers each cut's bytes in
// memory, without re-reading any prefix.

// dshStream is one dsh log open for a streamed replay.
type dshStream struct {
	name    string
	file    io.ReadSeeker
	maxLine int
	v0      bool
	enc     v0.Encoding
	header  v0.Header // v0: the log's header
	hdrLen  int64     // v0: the logical header line's length, newline included
	decider *dshlog.V0Decider
	pathErr error // v0: why the header names no path to recover a cut at
	total   int   // events
	bad     badSummary
	size    int64 // v1: bytes read by the first pass
}

// dshMaxLine is the line limit of a streamed dsh replay (<= 0:
// events.DefaultMaxLineBytes); tests lower it.
var dshMaxLine = 0

// errStopWalk ends a walk early (nothing more is needed).
var errStopWalk = errors.New("replay: walk stopped")

// openDSHStream runs the first pass over file (the log named name, which
// must seek): the format by its first bytes (dshlog.SniffFormat); every
// line within the limit; every event decoded. Its errors are
// those the whole-file replay (readDSHLog) reports.
func openDSHStream(name string, file io.ReadSeeker, maxLine int) (*dshStream, error) {
	s := &dshStream{name: name, file: file, maxLine: maxLine}
	head := make([]byte, dshlog.SniffBytes)
	n, err := io.ReadFull(file, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("--dsh %s: %w", name, err)
	}
	format, err := dshlog.SniffFormat(head[:n], filepath.Base(name))
	if err != nil {
		return nil, fmt.Errorf("--dsh %s: %w", name, err)
	}
	switch format {
	case dshlog.FormatV0Zstd:
		s.v0, s.enc = true, v0.Zstd
	case dshlog.FormatV0Raw:
		s.v0, s.enc = true, v0.Raw
	}
	if err := s.rewind(); err != nil {
		return nil, err
	}
	if s.v0 {
		return s, s.countV0()
	}
	return s, s.countV1()
}

func (s *dshStream) rewind() error {
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("--dsh %s: %w", s.name, err)
	}
	return nil
}

// countV1 is the first pass over a v1 log, as timeline.DSHEvidence decodes
// it: events counted, undecodable lines summed for the warnings.
func (s *dshStream) countV1() error {
	g := newLineGuard(s.file, events.StreamSessionLog, s.maxLine)
	for ev, err := range events.Decode(g, dsh.Codec{}, events.Options{MaxLineBytes: s.maxLine, RequireNewline: true}) {
		if err != nil {
			var e *events.Error
			if g.err == nil && errors.As(err, &e) {
				s.bad.add(e)
				continue
			}
			return fmt.Errorf("--dsh %s: %w", s.name, cmpOr(g.err, err))
		}
		if _, ok := ev.Body.(*dsh.EventBody); ok {
			s.total++
		}
	}
	s.size = g.n
	return nil
}

// countV0 is the first pass over a v0 log, as newDSHV0Session reads it: a
// raw log's lines within the limit (all of them, as readLines reads the
// whole file before the scan), the scan's refusal, and every event read
// back from its logical line.
func (s *dshStream) countV0() error {
	var g *lineGuard
	var r io.Reader = s.file
	if s.enc == v0.Raw {
		g = newLineGuard(s.file, events.StreamSessionLog, s.maxLine)
		r = g
	}
	var line []byte
	res, err := dshlog.ScanV0(r, s.enc, v0.Options{MaxLineBytes: s.maxLine}, func(rec *v0.Record) error {
		line = rec.AppendJSON(line[:0])
		if _, err := readBack(rec, line); err != nil {
			return err
		}
		s.total++
		return nil
	})
	if g != nil {
		if err != nil && g.err == nil {
			_, _ = io.Copy(io.Discard, g) // a longer line later is what readLines reports
		}
		if g.err != nil {
			return fmt.Errorf("--dsh %s: %w", s.name, g.err)
		}
	}
	if err != nil {
		return err
	}
	s.header, s.hdrLen = res.Header, int64(len(v0.AppendHeader(nil, res.Header)))+1
	// Where the whole-file replay recovers each cut (decideDSHV0).
	path, err := dshlog.V0Path("/replay", s.header, v0.Raw)
	if s.pathErr = err; err == nil {
		s.decider = dshlog.NewV0Decider(path, s.header)
	}
	return nil
}

// readBack parses a v0 event's logical line: the record replay steps (and
// the whole-file replay's cut holds).
func readBack(rec *v0.Record, line []byte) (v0.Record, error) {
	c, err := v0.ParseLine(nil, line)
	if err != nil || len(c) != 1 {
		return v0.Record{}, fmt.Errorf("replay: event %s does not read back: %v", rec.Describe(), err)
	}
	return c[0], nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// dshWalk is what the second pass calls: at(n) at crash point n (0 to
// total; the decision is read with point), then step for event n+1. Either
// returning errStopWalk ends the walk.
type dshWalk struct {
	at   func(n int, p dshPoint) error
	step func(e events.Event) error
}

// dshPoint is the recovery state at one crash point, valid during at.
type dshPoint struct {
	s    *dshStream
	n    int
	size int64 // v1: the cut's length
	v1   *dshlog.V1Scanner
	fold *dshrecovery.Fold // v0
	// stopped is the fold's refusal, which stops dsh's scan (v0).
	stopped error
}

// walk is the second pass: it returns an error when the log no longer reads
// as the first pass read it.
func (s *dshStream) walk(w dshWalk) error {
	if err := s.rewind(); err != nil {
		return err
	}
	var err error
	if s.v0 {
		err = s.walkV0(w)
	} else {
		err = s.walkV1(w)
	}
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// tapCodec decodes v1 lines as dsh.Codec does and feeds every line it is
// given to the recovery scan — after the crash point before the line's
// event, if it has one, was read: a cut ends where its next event's line
// starts (timeline.Evidence.Cut). Decode gives it every line but an
// unterminated last one, which the scan never takes either.
type tapCodec struct {
	dsh.Codec
	scan   *dshlog.V1Scanner
	before func(offset int64) error
	err    error
}

func (t *tapCodec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	out, err := t.Codec.DecodeLine(dst, line)
	for _, ev := range out[len(dst):] {
		if _, ok := ev.Body.(*dsh.EventBody); ok && t.err == nil {
			t.err = t.before(line.Pos.Offset)
			break
		}
	}
	t.scan.Line(line)
	return out, err
}

func (s *dshStream) walkV1(w dshWalk) error {
	p := dshPoint{s: s, v1: dshlog.NewV1Scanner(s.maxLine)}
	tap := &tapCodec{scan: p.v1}
	tap.before = func(offset int64) error {
		p.size = offset
		return w.at(p.n, p)
	}
	g := newLineGuard(s.file, events.StreamSessionLog, s.maxLine)
	for ev, err := range events.Decode(g, tap, events.Options{MaxLineBytes: s.maxLine, RequireNewline: true}) {
		if tap.err != nil {
			return tap.err
		}
		if err != nil {
			var e *events.Error
			if g.err == nil && errors.As(err, &e) {
				continue // counted by the first pass
			}
			return s.changed(p.n, cmpOr(g.err, err))
		}
		if _, ok := ev.Body.(*dsh.EventBody); !ok {
			continue
		}
		if p.n++; p.n > s.total {
			return s.changed(p.n, errors.New("more events than before"))
		}
		if err := w.step(ev); err != nil {
			return err
		}
	}
	if tap.err != nil {
		return tap.err
	}
	if p.n != s.total || g.n != s.size {
		return s.changed(p.n, fmt.Errorf("%d events in %d bytes, were %d in %d", p.n, g.n, s.total, s.size))
	}
	p.size = g.n
	return w.at(p.n, p)
}

func (s *dshStream) walkV0(w dshWalk) error {
	var g *lineGuard
	var r io.Reader = s.file
	if s.enc == v0.Raw {
		g = newLineGuard(s.file, events.StreamSessionLog, s.maxLine)
		r = g
	}
	p := dshPoint{s: s, fold: &dshrecovery.Fold{}}
	var line []byte
	offset := s.hdrLen // the logical line's offset: the header's, then each line's
	var werr error
	_, err := dshlog.ScanV0(r, s.enc, v0.Options{MaxLineBytes: s.maxLine}, func(rec *v0.Record) error {
		if werr = w.at(p.n, p); werr != nil {
			return werr
		}
		line = rec.AppendJSON(line[:0])
		c, err := readBack(rec, line)
		if err != nil {
			return err
		}
		if p.n++; p.n > s.total {
			return errors.New("more events than before")
		}
		if err := p.fold.Visit(&c); err != nil && p.stopped == nil {
			p.stopped = err
		}
		ev := events.Event{
			Stream: events.StreamTranscript, Kind: events.Kind("dsh." + c.Type),
			Pos:  events.Position{Line: p.n + 1, Offset: offset},
			Time: events.Time{Ms: int64(c.Time), OK: true}, Body: &dshV0Body{rec: c},
		}
		offset += int64(len(line)) + 1
		werr = w.step(ev)
		return werr
	})
	if werr != nil {
		return werr
	}
	if g != nil && g.err != nil {
		err = g.err
	}
	if err == nil && p.n != s.total {
		err = fmt.Errorf("%d events, were %d", p.n, s.total)
	}
	if err != nil {
		return s.changed(p.n, err)
	}
	return w.at(p.n, p)
}

// changed is the error of a log that no longer reads as the first pass
// read it (written to during the replay).
func (s *dshStream) changed(n int, err error) error {
	return fmt.Errorf("--dsh %s changed while it was replayed (after event %d): %w", s.name, n, err)
}

// outcome is what recovery decides at the point: that of decide on the
// whole-file replay's session at the same crash point. trace false leaves
// out what only a printed decision shows (the crash table's rows).
func (p dshPoint) outcome(trace bool) outcome {
	out := outcome{At: p.n, Dangling: []string{}, Append: []string{}, Vetoes: []guards.Veto{}, Trace: []string{}, Guards: []guardDecision{}}
	if trace {
		if out, _ = newOutcome(p.n); out.Error != "" {
			return out
		}
	}
	if p.v1 != nil {
		dec, err := p.v1.Decide(dshV1ReplayPath, p.size)
		return dshV1Outcome(dec.Fold, dec.Repair, err, trace, out)
	}
	if p.s.pathErr != nil {
		out.Error = p.s.pathErr.Error()
		return out
	}
	res := v0.Result{Header: p.s.header, Events: int64(p.n), Cut: -1}
	plan, err := p.s.decider.Decide(res, p.stopped, p.fold)
	return dshV0Outcome(p.fold, p.stopped == nil, plan, err, trace, out)
}
