package dshlog_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
)

// v1Verdict is what a test compares of a recovery: the error, or the cut,
// the closers and the open turn's fold.
func v1Verdict(rep adapters.Repair, fold string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "cut %d; fold %s", rep.TruncatedBytes, fold)
	for _, c := range rep.Closers {
		fmt.Fprintf(&b, "; %d %s %s", c.Seq, c.Type, c.Data)
	}
	return b.String()
}

// checkScannerAtEveryLine feeds data to a V1Scanner line by line and
// checks, at every line boundary and at the end, that its decision is what
// RecoverV1 decides over those bytes (in memory), word for word.
func checkScannerAtEveryLine(t *testing.T, data []byte, maxLine int) {
	t.Helper()
	const path = "/v/s.jsonl"
	recover := func(cut []byte) string {
		m := memory.NewFS()
		if err := m.MkdirAll("/v", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteFile(path, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		rec, err := dshlog.RecoverV1Max(m, path, maxLine)
		fold := ""
		if err == nil {
			fold = fmt.Sprintf("%d events", len(rec.Events)-len(rec.Repair.Closers))
		}
		rec.Repair.Evidence = ""
		return v1Verdict(rec.Repair, fold, err)
	}
	s := dshlog.NewV1Scanner(maxLine)
	decide := func(size int64) string {
		d, err := s.Decide(path, size)
		fold := ""
		if err == nil {
			fold = fmt.Sprintf("%d events", d.Events)
		}
		return v1Verdict(d.Repair, fold, err)
	}
	for line, err := range events.Lines(bytes.NewReader(data), maxLine) {
		if err != nil {
			t.Fatal(err)
		}
		at := line.Pos.Offset
		if got, want := decide(at), recover(data[:at]); got != want {
			t.Fatalf("before line %d (offset %d):\n got %s\nwant %s", line.Pos.Line, at, got, want)
		}
		s.Line(line)
	}
	if got, want := decide(int64(len(data))), recover(data); got != want {
		t.Fatalf("at the end (%d bytes):\n got %s\nwant %s", len(data), got, want)
	}
}

// The scanner decides at every line boundary what RecoverV1 decides over
// the bytes before it: on the example log, its cuts, and damaged copies
// (a bad line before and after a turn/end, a seq gap, a torn final line, a
// wrong version, a header that is not one, a line over the limit).
func TestV1ScannerDecidesAsRecoverV1AtEveryLine(t *testing.T) {
	log, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(log, []byte("\n"))
	insert := func(k int, b string) []byte {
		return bytes.Join(append(append(append([][]byte{}, lines[:k]...), []byte(b)), lines[k:]...), nil)
	}
	cases := map[string][]byte{
		"example":         log,
		"bad before end":  insert(5, "{not json\n"),
		"bad after end":   insert(22, "{not json\n"),
		"empty line":      insert(3, "\n"),
		"seq gap":         insert(7, string(lines[2])),
		"torn":            append(bytes.Clone(log), `{"type":"turn/end","seq":27`...),
		"torn json":       append(bytes.Clone(log), bytes.TrimSuffix(lines[20], []byte("\n"))...),
		"version 2":       bytes.Replace(log, []byte(`"version":1`), []byte(`"version":2`), 1),
		"no header":       bytes.Join(lines[1:], nil),
		"header not json": insert(0, "{\n"),
		"bad payload":     bytes.Replace(log, []byte(`{"turn":2,"trigger"`), []byte(`{"turn":"x","trigger"`), 1),
		"long line":       insert(9, string(bytes.Repeat([]byte("x"), 300))+"\n"),
		"long header":     insert(0, string(bytes.Repeat([]byte("x"), 300))+"\n"),
		"empty":           nil,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) { checkScannerAtEveryLine(t, data, 256) })
	}
}

// FuzzV1Scanner holds the scanner to RecoverV1 at every line boundary of
// any input; seeded with the example log and damaged lines.
func FuzzV1Scanner(f *testing.F) {
	log, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(log)
	f.Add(log[:len(log)/2])
	f.Add(append(bytes.Clone(log[:400]), "{not json\n"+`{"type":"turn/end","seq":9,"time":1,"data":{"turn":1}}`+"\n"...))
	f.Add([]byte(`{"type":"session","version":1,"id":"s","createdAt":1,"cwd":"/w"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return // a recovery per line: keep each input quick
		}
		checkScannerAtEveryLine(t, data, 512)
	})
}

// Coverage-guided fuzzing of this package barely runs on the shared
// machine, so random damage is explored here too, seeded: lines dropped,
// repeated, swapped, cut short or with a byte changed.
func TestV1ScannerOnRandomDamage(t *testing.T) {
	log, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(16, 35))
	for range 300 {
		lines := bytes.SplitAfter(bytes.Clone(log), []byte("\n"))
		for range 1 + r.IntN(3) {
			k := r.IntN(len(lines))
			switch r.IntN(5) {
			case 0:
				lines = append(lines[:k], lines[k+1:]...)
			case 1:
				lines = append(lines[:k+1], lines[k:]...)
			case 2:
				j := r.IntN(len(lines))
				lines[k], lines[j] = lines[j], lines[k]
			case 3:
				lines[k] = lines[k][:r.IntN(len(lines[k])+1)]
			case 4:
				if len(lines[k]) > 0 {
					b := bytes.Clone(lines[k])
					b[r.IntN(len(b))] = "{}\":,x0\n"[r.IntN(8)]
					lines[k] = b
				}
			}
		}
		checkScannerAtEveryLine(t, bytes.Join(lines, nil), 512)
	}
}
