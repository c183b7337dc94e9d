package v0_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

const header = `{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/w","delegationDepth":0}`

// batches are append batches in the package's shapes (dsh-session
// 0.1.0-rc.8 types.d.ts), one packed row among them.
var batches = []string{
	`{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}
{"type":"step/start","seq":1,"time":11,"data":{"turn":1,"step":1}}`,
	`{"type":"reasoning-chunks","seq0":2,"time0":12,"data":{"turn":1,"step":1,"index":0,"dt":[0,3],"texts":["thi","nk\"","ing é"]}}
{"type":"tool-call-chunks","seq0":5,"time0":15,"data":{"turn":1,"step":1,"index":1,"id":"c1","name":"bash","dt":[1,1],"args":["{\"a","\":","1}"]}}
{"type":"step/end","seq":8,"time":17,"data":{"turn":1,"step":1}}`,
	`{"type":"turn/end","seq":9,"time":18,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
}

func rawLog() []byte { return []byte(header + "\n" + strings.Join(batches, "\n") + "\n") }

func zstdLog(t testing.TB) []byte {
	w, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	out := w.EncodeAll([]byte(header+"\n"), nil)
	for _, b := range batches {
		out = w.EncodeAll([]byte(b+"\n"), out)
	}
	return out
}

func scanAll(t testing.TB, data []byte, enc v0.Encoding) ([]string, v0.Result, error) {
	var got []string
	res, err := v0.Scan(bytes.NewReader(data), enc, v0.Options{}, func(r v0.Record) error {
		got = append(got, string(r.AppendJSON(nil)))
		return nil
	})
	return got, res, err
}

func TestScanDecodesRowsLosslessly(t *testing.T) {
	raw, res, err := scanAll(t, rawLog(), v0.Raw)
	if err != nil || res.Events != 10 || res.Cut != -1 {
		t.Fatalf("%v %+v", err, res)
	}
	z, zres, err := scanAll(t, zstdLog(t), v0.Zstd)
	if err != nil || zres.Frames != 4 || strings.Join(z, "\n") != strings.Join(raw, "\n") {
		t.Fatalf("zstd differs from raw: %v %+v", err, zres)
	}
	for i, want := range []string{
		`{"type":"assistant/chunk","seq":4,"time":15,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"ing é"}}}`,
		`{"type":"assistant/chunk","seq":5,"time":15,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":"c1","name":"bash","argumentsDelta":"{\"a"}}}`,
	} {
		if raw[4+i] != want {
			t.Errorf("member %d:\n got %s\nwant %s", 4+i, raw[4+i], want)
		}
		if !json.Valid([]byte(raw[4+i])) {
			t.Errorf("member %d is not JSON", 4+i)
		}
	}
}

// Every cut of a zstd log is either refused (inside the header frame) or a
// prefix: what is read never exceeds what the full log reads, and the cut
// is the start of the torn frame.
func TestScanZstdEveryCut(t *testing.T) {
	full := zstdLog(t)
	all, _, _ := scanAll(t, full, v0.Zstd)
	for n := 0; n < len(full); n++ {
		got, res, err := scanAll(t, full[:n], v0.Zstd)
		if err != nil {
			if !errors.Is(err, events.ErrCorrupt) {
				t.Fatalf("cut %d: %v", n, err)
			}
			continue
		}
		if strings.Join(got, "\n") != strings.Join(all[:len(got)], "\n") {
			t.Fatalf("cut %d: not a prefix", n)
		}
		if res.Cut > int64(n) { // -1 at a frame boundary: nothing is torn
			t.Fatalf("cut %d: repair cut %d", n, res.Cut)
		}
	}
}

// A torn raw block yields the bytes present, as zstd's streaming decoder
// flushes them (checked against Node's in the dshlog oracle test).
func TestDecodePrefixRawBlock(t *testing.T) {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true))
	// Random-looking bytes do not compress: the encoder stores a raw block.
	plain := []byte(`{"a":"q9Zx"}` + "\n" + `{"b":"7Lm`)
	frame := w.EncodeAll(plain, nil)
	fr := v0.NewFrameReader(bytes.NewReader(frame[:len(frame)-7]), 0)
	_, err := fr.Next()
	var torn *v0.TornFrame
	if !errors.As(err, &torn) || !errors.Is(err, events.ErrTornTail) {
		t.Fatalf("%v", err)
	}
	d := v0.NewFrameDecoder(0)
	defer d.Close()
	got := d.DecodePrefix(torn)
	if !bytes.HasPrefix(plain, got) || len(got) < len(`{"a":"q9Zx"}`+"\n") {
		t.Fatalf("prefix %q", got)
	}
}

func TestFrameReaderCorruption(t *testing.T) {
	full := zstdLog(t)
	bad := append([]byte{}, full...)
	bad[0] ^= 1
	if _, err := v0.NewFrameReader(bytes.NewReader(bad), 0).Next(); !errors.Is(err, events.ErrCorrupt) || !strings.Contains(err.Error(), "byte 0") {
		t.Fatalf("bad magic: %v", err)
	}
	bad = append([]byte{}, full...)
	bad[4] |= 0x08
	if _, err := v0.NewFrameReader(bytes.NewReader(bad), 0).Next(); !errors.Is(err, events.ErrCorrupt) || !strings.Contains(err.Error(), "reserved frame-header bit at byte 4") {
		t.Fatalf("reserved bit: %v", err)
	}
	if _, err := v0.NewFrameReader(bytes.NewReader(full), 8).Next(); !errors.Is(err, events.ErrLineTooLong) {
		t.Fatalf("too large: %v", err)
	}
	fr := v0.NewFrameReader(bytes.NewReader(nil), 0)
	if _, err := fr.Next(); err != io.EOF {
		t.Fatalf("empty: %v", err)
	}
}

func TestHeader(t *testing.T) {
	h, err := v0.ParseHeader([]byte(`{"type":"session","version":0,"id":"s","createdAt":5,"cwd":"/w","origin":"subagent","delegationDepth":2,"agentPreset":"x","extra":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v0.AppendHeader(nil, h)); got != `{"type":"session","version":0,"id":"s","createdAt":5,"cwd":"/w","origin":"subagent","delegationDepth":2,"agentPreset":"x"}` {
		t.Fatalf("re-encoded %s", got)
	}
	for line, want := range map[string]error{
		`{"type":"session","version":1,"id":"s"}`:                                                   v0.ErrUnsupportedVersion,
		`{"type":"session","version":0,"id":"s","createdAt":-0,"delegationDepth":0}`:                events.ErrCorrupt,
		`{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":1.5}`:               events.ErrCorrupt,
		`{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"origin":"x"}`:    events.ErrCorrupt,
		`{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"sandboxMode":1}`: events.ErrCorrupt,
		`[]`:  events.ErrCorrupt,
		`{"a`: events.ErrCorrupt,
	} {
		if _, err := v0.ParseHeader([]byte(line)); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", line, err, want)
		}
	}
}

// FuzzParseLine is the chunk-row decoder's fuzzer: nothing panics; a row
// expands to members whose JSON is valid, with consecutive seqs.
//
//	go test -run='^$' -fuzz=FuzzParseLine -fuzztime=60s ./events/dsh/v0
func FuzzParseLine(f *testing.F) {
	for _, b := range batches {
		for _, l := range strings.Split(b, "\n") {
			f.Add([]byte(l))
		}
	}
	f.Add([]byte(`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["x"]}}`))
	f.Add([]byte(`{"type":"tool-call-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"id":"c","dt":[1e300],"args":["x","y"]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, line []byte) {
		// The splitters trust their input; on any bytes they must still
		// terminate without panicking.
		_, _ = v0.Object(nil, line)
		_, _ = v0.Array(nil, line)
		recs, err := v0.ParseLine(nil, line)
		if err != nil {
			if !errors.Is(err, events.ErrCorrupt) && !errors.Is(err, v0.ErrNullRecord) {
				t.Fatalf("unclassified: %v", err)
			}
			return
		}
		for i, r := range recs {
			if ms, ok := v0.Object(nil, r.Data); ok {
				for _, m := range ms {
					if !json.Valid(m.Value) {
						t.Fatalf("member %q of valid data is not JSON: %q", m.Key, m.Value)
					}
				}
			}
			b := r.AppendJSON(nil)
			if !json.Valid(b) && r.Verbatim() && json.Valid(line) {
				t.Fatalf("verbatim record is not the line")
			}
			if !r.Verbatim() {
				if !json.Valid(b) {
					t.Fatalf("member %d: invalid JSON %s", i, b)
				}
				if i > 0 && r.Seq != recs[i-1].Seq+1 {
					t.Fatalf("member seqs not consecutive")
				}
				again, err := v0.ParseLine(nil, b)
				if err != nil || len(again) != 1 || again[0].Seq != r.Seq || again[0].Time != r.Time {
					t.Fatalf("member %d does not read back: %v", i, err)
				}
			}
		}
	})
}

// FuzzFrameReader is the frame reader's fuzzer: over any bytes, Scan never
// panics and fails only with a classified error; a torn frame's prefix
// decode never panics.
//
//	go test -run='^$' -fuzz=FuzzFrameReader -fuzztime=60s ./events/dsh/v0
func FuzzFrameReader(f *testing.F) {
	full := zstdLog(f)
	f.Add(full)
	f.Add(full[:len(full)-5])
	f.Add(full[:20])
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, err := scanAll(t, data, v0.Zstd)
		if err != nil && !errors.Is(err, events.ErrCorrupt) && !errors.Is(err, v0.ErrUnsupportedVersion) && !errors.Is(err, events.ErrLineTooLong) {
			t.Fatalf("unclassified: %v", err)
		}
		fr := v0.NewFrameReader(bytes.NewReader(data), 1<<20)
		d := v0.NewFrameDecoder(1 << 20)
		defer d.Close()
		for {
			fm, err := fr.Next()
			var torn *v0.TornFrame
			if errors.As(err, &torn) {
				_ = d.DecodePrefix(torn)
				return
			}
			if err != nil {
				return
			}
			var h zstd.Header // klauspost's own reading of the frame header
			if h.Decode(fm.Bytes) == nil {
				if n, ok := fm.ContentSize(); ok != h.HasFCS || n != h.FrameContentSize {
					t.Fatalf("frame %d: ContentSize %d %v, klauspost reads %d %v", fm.Index, n, ok, h.FrameContentSize, h.HasFCS)
				}
			}
			_, _ = d.Decode(nil, fm)
		}
	})
}

// A frame's declared content size (the batch bound's hint) is its
// plaintext's length in every field width (1, 2, 4 and 8 bytes; the 2-byte
// width is offset by 256), and absent where the header has no such field:
// klauspost leaves it out of small multi-segment frames and streamed ones.
func TestFrameContentSize(t *testing.T) {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	var data []byte
	sizes := []int{10, 300, 65791, 65792, 70000, 1 << 20}
	declared := []bool{false, true, true, true, true, true}
	for _, n := range sizes {
		data = w.EncodeAll(bytes.Repeat([]byte{'a'}, n), data)
	}
	var streamed bytes.Buffer
	sw, _ := zstd.NewWriter(&streamed, zstd.WithEncoderCRC(true))
	sw.Write([]byte("no size declared\n"))
	sw.Close()
	data = append(data, streamed.Bytes()...)
	fr := v0.NewFrameReader(bytes.NewReader(data), 0)
	for k := 0; ; k++ {
		fm, err := fr.Next()
		if err == io.EOF {
			if k != len(sizes)+1 {
				t.Fatalf("%d frames", k)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n, ok := fm.ContentSize()
		if k == len(sizes) {
			if ok {
				t.Fatalf("streamed frame declares %d", n)
			}
			continue
		}
		if ok != declared[k] || ok && n != uint64(sizes[k]) {
			t.Fatalf("frame %d: declared %d %v, plaintext %d (header %x)", k, n, ok, sizes[k], fm.Bytes[:min(len(fm.Bytes), 14)])
		}
	}
	// The widths klauspost does not write here, by hand: a single-segment
	// frame's 1-byte size (with a 1-byte dictionary id before it) and an
	// 8-byte size; and a header cut short declares nothing.
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	for _, c := range []struct {
		hdr  []byte
		want uint64
		ok   bool
	}{
		{[]byte{0x21, 7, 200}, 200, true},
		{[]byte{0xc0, 0x58, 1, 2, 3, 4, 5, 6, 7, 8}, 0x0807060504030201, true},
		{[]byte{0xc0, 0x58, 1, 2, 3}, 0, false},
		{[]byte{0x00, 0x58}, 0, false},
	} {
		n, ok := v0.Frame{Bytes: append(bytes.Clone(magic), c.hdr...)}.ContentSize()
		if n != c.want || ok != c.ok {
			t.Errorf("header %x: %d %v, want %d %v", c.hdr, n, ok, c.want, c.ok)
		}
	}
}

// dsh writes whole lines per frame, but its scanner reads the decoded
// stream, so a line cut across frames is one line: every line of the log
// split at arbitrary points over frames of 37 bytes reads as the log does,
// and every cut of it is a prefix or refused.
func TestScanLinesAcrossFrames(t *testing.T) {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	split := w.EncodeAll([]byte(header+"\n"), nil)
	rest := strings.Join(batches, "\n") + "\n"
	for len(rest) > 0 {
		n := min(len(rest), 37)
		split = w.EncodeAll([]byte(rest[:n]), split)
		rest = rest[n:]
	}
	want, _, err := scanAll(t, zstdLog(t), v0.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	got, res, err := scanAll(t, split, v0.Zstd)
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") || res.Events != 10 {
		t.Fatalf("split log: %v %+v", err, res)
	}
	for n := 0; n < len(split); n++ {
		got, _, err := scanAll(t, split[:n], v0.Zstd)
		if err == nil && strings.Join(got, "\n") != strings.Join(want[:len(got)], "\n") {
			t.Fatalf("cut %d: not a prefix", n)
		}
		if err != nil && !errors.Is(err, events.ErrCorrupt) {
			t.Fatalf("cut %d: %v", n, err)
		}
	}
}
