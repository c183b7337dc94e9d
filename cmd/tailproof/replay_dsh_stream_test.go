package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// dshCase is one dsh log a test writes: its file name (which picks the
// format) and bytes.
type dshCase struct {
	name, base string
	data       []byte
}

// dshCases are dsh logs of every shape the replay must print as the
// whole-file replay does: the examples, every cut of them (torn tails
// mid-line included), damaged lines before and after a turn/end, seq gaps,
// bad and missing headers, refused events, and the benchmark shapes of v0.
func dshCases(t *testing.T) []dshCase {
	t.Helper()
	v1, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	zst, err := os.ReadFile("../../examples/dsh/v0/--home-me-proj--/sess-01/session.jsonl.zstd")
	if err != nil {
		t.Fatal(err)
	}
	var out []dshCase
	add := func(name, base string, data []byte) {
		out = append(out, dshCase{name: name, base: base, data: data})
	}
	add("v1", "s.jsonl", v1)
	lines := bytes.SplitAfter(v1, []byte("\n"))
	for _, k := range []int{1, 2, 5, 12, 21, 26} { // line k damaged, seq gaps, a later turn/end or not
		for i, bad := range [][]byte{[]byte("{not json\n"), []byte("\n"), lines[k-1]} {
			mut := bytes.Join(append(append(append([][]byte{}, lines[:k]...), bad), lines[k:]...), nil)
			add(fmt.Sprintf("v1-line%d-bad%d", k, i), "s.jsonl", mut)
		}
	}
	for cut := 0; cut <= len(v1); cut += 37 {
		add(fmt.Sprintf("v1-cut%d", cut), "s.jsonl", v1[:cut])
	}
	add("v1-torn-json", "s.jsonl", append(bytes.Clone(v1), lines[3]...)[:len(v1)+len(lines[3])-1])
	add("v1-version2", "s.jsonl", bytes.Replace(v1, []byte(`"version":1`), []byte(`"version":2`), 1))
	add("v1-no-header", "s.jsonl", bytes.Join(lines[1:], nil))
	add("v1-bad-payload", "s.jsonl", bytes.Replace(v1, []byte(`{"turn":2,"trigger"`), []byte(`{"turn":"x","trigger"`), 1))
	add("v1-as-v0-name", dshlog.V0RawName, v1)

	raw := decompressV0(t, zst)
	add("v0-zstd", dshlog.V0ZstdName, zst)
	add("v0-raw", dshlog.V0RawName, raw)
	for cut := 0; cut <= len(zst); cut += len(zst)/9 + 1 {
		add(fmt.Sprintf("v0-zstd-cut%d", cut), dshlog.V0ZstdName, zst[:cut])
	}
	for cut := 0; cut <= len(raw); cut += 61 {
		add(fmt.Sprintf("v0-raw-cut%d", cut), dshlog.V0RawName, raw[:cut])
	}
	rl := bytes.SplitAfter(raw, []byte("\n"))
	add("v0-raw-bad-line", dshlog.V0RawName, bytes.Join(append(append(append([][]byte{}, rl[:4]...), []byte("{torn\n")), rl[4:]...), nil))
	add("v0-unknown-type", dshlog.V0RawName, bytes.Replace(raw, []byte(`"type":"request/header"`), []byte(`"type":"future/event"`), 1))
	add("v0-refused", dshlog.V0RawName, bytes.Replace(raw, []byte(`"id":"u1",`), nil, 1))
	add("v0-bad-id", dshlog.V0RawName, bytes.Replace(raw, []byte(`"id":"sess-01"`), []byte(`"id":"../x"`), 1))
	for _, shape := range []string{"chunks", "packed", "tools"} {
		frames := v0test.Frames(shape, 3)
		// Crashed inside the last turn: its final frame is lost.
		frames = frames[:len(frames)-1]
		add("v0test-"+shape, dshlog.V0ZstdName, v0test.Compress(frames))
		add("v0test-"+shape+"-raw", dshlog.V0RawName, bytes.Join(frames, nil))
	}
	return out
}

func decompressV0(t *testing.T, zst []byte) []byte {
	t.Helper()
	var raw []byte
	res, err := v0.Scan(bytes.NewReader(zst), v0.Zstd, v0.Options{}, func(r v0.Record) error {
		raw = append(r.AppendJSON(raw), '\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(append(v0.AppendHeader(nil, res.Header), '\n'), raw...)
}

// The streamed dsh replay prints what the whole-file replay prints — stdout,
// stderr, exit code and --html page, byte for byte — on every case, for
// every way of calling it; the whole-file replay decides each crash point
// by recovering the cut's bytes in memory (dshlog.RecoverV1/RecoverV0), so
// this holds the one pass's decisions to `dsh recover`'s.
func TestStreamedDSHReplayPrintsTheWholeFileReplay(t *testing.T) {
	dir := t.TempDir()
	argSets := [][]string{nil, {"--json"}, {"--at", "3"}, {"--crash-at", "5"}, {"--crash-at", "0", "--json"},
		{"--crash-at", "all"}, {"--crash-at", "all", "--json"}, {"--at", "999"}, {"--crash-at", "all", "--html", "PAGE"},
		{"--crash-at", "2", "--html", "PAGE"}}
	for i, c := range dshCases(t) {
		p := filepath.Join(dir, fmt.Sprint(i), c.base)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, extra := range argSets {
			compareDSHReplay(t, c.name, p, extra)
		}
	}
}

func compareDSHReplay(t *testing.T, name, path string, extra []string) {
	t.Helper()
	page := filepath.Join(filepath.Dir(path), "page.html")
	args := []string{"replay", "--dsh", path}
	for _, a := range extra {
		args = append(args, strings.ReplaceAll(a, "PAGE", page))
	}
	type result struct {
		code           int
		out, errs, htm string
	}
	runIt := func(whole bool) result {
		defer func(old bool) { replayWholeFile = old }(replayWholeFile)
		replayWholeFile = whole
		os.Remove(page)
		code, out, errs := replayCLI(t, args...)
		htm, _ := os.ReadFile(page)
		return result{code, out, errs, string(htm)}
	}
	want, got := runIt(true), runIt(false)
	if got != want {
		t.Errorf("%s %v: streamed differs from the whole-file replay:\n%s", name, extra, firstDiff(want.out+want.errs+want.htm, got.out+got.errs+got.htm))
		if got.code != want.code {
			t.Errorf("exit %d, want %d", got.code, want.code)
		}
	}
}

// firstDiff shows where two outputs part.
func firstDiff(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("want …%s\ngot  …%s", want[from:min(len(want), i+200)], got[from:min(len(got), i+200)])
}

// A dsh log with a line over the limit stops the streamed replay at the
// line's position, after at most one read past the limit, with the
// whole-file replay's error — also when the log never ends (an endless
// reader), which is never read on.
func TestStreamedDSHReplayRefusesAnEndlessLine(t *testing.T) {
	const max = 1000
	header := `{"type":"session","version":1,"id":"s","createdAt":1,"cwd":"/w"}` + "\n"
	for _, name := range []string{"/w/s.jsonl", "/w/" + dshlog.V0RawName} {
		src := &endless{}
		open := func() io.Reader { return io.MultiReader(strings.NewReader(header), src) }
		_, err := openDSHStream(name, &readSeeker{open: open, r: open()}, max)
		var ee *events.Error
		if !errors.As(err, &ee) || !errors.Is(err, events.ErrLineTooLong) ||
			ee.Pos != (events.Position{Line: 2, Offset: int64(len(header))}) || !strings.Contains(err.Error(), "--dsh "+name) {
			t.Fatalf("%s: %v", name, err)
		}
		if src.read > max+320<<10 { // one read of the line splitter's 256 KiB buffer past the limit
			t.Errorf("%s: read %d bytes of an endless line, limit %d", name, src.read, max)
		}
	}
	// The same limit in both replays, on a file: the same error.
	defer func(old int) { dshMaxLine = old }(dshMaxLine)
	dshMaxLine = max
	dir := t.TempDir()
	for _, base := range []string{"s.jsonl", dshlog.V0RawName} {
		p := filepath.Join(dir, base)
		data := header + `{"type":"turn/start","seq":0,"time":2,"data":{"turn":1}}` + "\n" + strings.Repeat("x", max+1) + "\n"
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		compareDSHReplay(t, base+" over the limit", p, nil)
		compareDSHReplay(t, base+" over the limit", p, []string{"--crash-at", "all"})
	}
}

// readSeeker reads open's reader, opened again by a seek to the start.
type readSeeker struct {
	open func() io.Reader
	r    io.Reader
}

func (s *readSeeker) Read(p []byte) (int, error) { return s.r.Read(p) }

func (s *readSeeker) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekStart {
		return 0, errors.New("readSeeker: seeks only to the start")
	}
	s.r = s.open()
	return 0, nil
}
