// Package shape writes large, realistic Qwen Code transcripts for
// benchmarks, in several content shapes: the benchmark command
// (simulations/bench/gen) and the package benchmarks (events/qwen) read the
// same bytes.
//
// Records follow the key order of Qwen Code 0.24.4's createBaseRecord
// (chatRecordingService, read in the published bundle) and are serialized
// as JSON.stringify does (no HTML escaping). Tool outputs are most of a
// transcript's bytes, so the shapes differ in what those hold:
//
//   - ls: `ls -l` lines, 64 KiB per output (about 1.5% backslashes, 0.3%
//     quotes): the project's original benchmark.
//   - dense: tool outputs as real sessions hold them — source files, JSON
//     returned by tools, build and test output with quotes and tabs, a
//     little prose — 64 KiB each, about 13% backslashes and 3.5% quotes.
//   - code: long code outputs, a 256 KiB source file per read_file call.
//   - small: many small records (about 600 bytes each): short prompts, tool
//     outputs of a few hundred bytes, a turn_result per turn. The chain
//     index, not the bytes, dominates there.
//   - mixed: turns of one to four tool calls whose outputs range from 200
//     bytes to 400 KiB of the ls, dense and code kinds, thoughts,
//     notifications and turn_result records.
//   - files: content this package did not write — each turn is one
//     read_file call whose output is the next of Options.Files (real files
//     a user's tools read: a source tree, a package's bundle), in turn.
//
// Every record's parent is the record before it, unless RewindEvery is set:
// then every N-th turn branches from the end of the turn before the
// previous one (a user rewind), and the active chain is not the file.
package shape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unicode/utf8"
)

// Names lists the shapes Write writes from its own content; Write also
// knows "files", whose content is Options.Files.
var Names = []string{"ls", "dense", "code", "small", "mixed"}

// Options say what to write.
type Options struct {
	Shape string // one of Names
	// Bytes is the size to reach: the last turn starts once it is reached.
	Bytes int64
	// OutputKB overrides the size of each tool output of the ls, dense and
	// code shapes (0: the shape's default).
	OutputKB    int
	RewindEvery int
	// Files are the tool outputs of the files shape, used in order and
	// cycled (simulations/bench/gen -files DIR reads them from a directory).
	Files     []string
	Seed      uint64
	SessionID string
	Cwd       string
	StartMs   int64 // the first record's time
}

// Turn is one prompt's turn as the daemon saw it: its admission (with the
// transcript tail it captured) and the time its turn ended.
type Turn struct {
	PromptID   string
	TailUUID   string // "" when the transcript was empty
	AdmittedAt int64
	EndedAt    int64
}

// Stats describe what Write wrote.
type Stats struct {
	Bytes, Records int64
	// Backslashes and Quotes count those bytes: the ones that stop a string
	// scanner.
	Backslashes, Quotes int64
	Turns               []Turn
}

func (s Stats) String() string {
	return fmt.Sprintf("%d turns, %d records, %d MB, %.1f%% backslashes, %.1f%% quotes",
		len(s.Turns), s.Records, s.Bytes>>20,
		100*float64(s.Backslashes)/float64(max(1, s.Bytes)), 100*float64(s.Quotes)/float64(max(1, s.Bytes)))
}

// Write writes a transcript of about o.Bytes bytes (at least one turn) to w.
func Write(w io.Writer, o Options) (Stats, error) {
	return write(w, o, nil)
}

// Outputs returns the tool outputs of the transcript Write writes for o,
// turn by turn (a turn may have none). The Codex and Claude codec
// benchmarks put them in their own records, so that every codec is measured
// on the same strings.
func Outputs(o Options) ([][]string, error) {
	var outs [][]string
	_, err := write(io.Discard, o, &outs)
	return outs, err
}

func write(w io.Writer, o Options, outs *[][]string) (Stats, error) {
	content, ok := shapes[o.Shape]
	if !ok {
		return Stats{}, fmt.Errorf("shape: unknown shape %q", o.Shape)
	}
	if o.Shape == "files" && len(o.Files) == 0 {
		return Stats{}, fmt.Errorf("shape: the files shape needs Options.Files")
	}
	t := &transcript{w: bufio.NewWriterSize(w, 1<<20), ts: o.StartMs, sid: o.SessionID, cwd: o.Cwd}
	t.enc = json.NewEncoder(&t.buf)
	t.enc.SetEscapeHTML(false)
	g := &turns{rng: rand.New(rand.NewPCG(o.Seed, 0x7a11)), outputKB: o.OutputKB, w: t, outs: outs, files: o.Files}
	var starts []*string // starts[k]: the parent the k-th turn began with
	for turn := 0; ; turn++ {
		last := t.stats.Bytes >= o.Bytes
		if o.RewindEvery > 0 && turn > 1 && turn%o.RewindEvery == 0 && !last {
			t.parent = starts[turn-1] // the user rewound the previous turn away
		}
		starts = append(starts, t.parent)
		tr := Turn{PromptID: fmt.Sprintf("prompt-%06d", turn), AdmittedAt: t.ts}
		if t.parent != nil {
			tr.TailUUID = *t.parent
		}
		t.ts++
		if outs != nil {
			*outs = append(*outs, nil)
		}
		content(g, turn, tr.PromptID)
		tr.EndedAt = t.ts
		t.ts++
		t.stats.Turns = append(t.stats.Turns, tr)
		if t.err != nil {
			return t.stats, t.err
		}
		if last {
			break
		}
	}
	return t.stats, t.w.Flush()
}

// transcript serializes records in Qwen's key order and counts what it wrote.
type transcript struct {
	w        *bufio.Writer
	buf      bytes.Buffer
	enc      *json.Encoder
	parent   *string
	ts       int64
	sid, cwd string
	stats    Stats
	err      error
}

// record is a ChatRecord with the fields in createBaseRecord's order.
type record struct {
	UUID           string   `json:"uuid"`
	ParentUUID     *string  `json:"parentUuid"`
	SessionID      string   `json:"sessionId"`
	Timestamp      string   `json:"timestamp"`
	Type           string   `json:"type"`
	Provenance     string   `json:"provenance,omitempty"`
	Cwd            string   `json:"cwd"`
	Version        string   `json:"version"`
	Subtype        string   `json:"subtype,omitempty"`
	Model          string   `json:"model,omitempty"`
	Message        *message `json:"message,omitempty"`
	UsageMetadata  any      `json:"usageMetadata,omitempty"`
	SystemPayload  any      `json:"systemPayload,omitempty"`
	PromptID       string   `json:"promptId,omitempty"`
	DaemonPromptID string   `json:"daemonPromptId,omitempty"`
}

type message struct {
	Role  string `json:"role"`
	Parts []any  `json:"parts"`
}

// write appends r (identity, time and cwd filled in) and makes it the
// parent of the next record.
func (t *transcript) write(uuid string, r record) {
	r.UUID, r.ParentUUID, r.SessionID, r.Cwd, r.Version = uuid, t.parent, t.sid, t.cwd, "0.24.4"
	r.Timestamp = time.UnixMilli(t.ts).UTC().Format("2006-01-02T15:04:05.000Z")
	t.buf.Reset()
	if err := t.enc.Encode(&r); err != nil && t.err == nil {
		t.err = err
	}
	b := t.buf.Bytes()
	if _, err := t.w.Write(b); err != nil && t.err == nil {
		t.err = err
	}
	t.stats.Bytes += int64(len(b))
	t.stats.Records++
	t.stats.Backslashes += int64(bytes.Count(b, []byte{'\\'}))
	t.stats.Quotes += int64(bytes.Count(b, []byte{'"'}))
	u := uuid
	t.parent = &u
	t.ts += 250
}

// Quote returns s as a JSON string, quotes included, escaped as
// JSON.stringify and serde_json escape it (no HTML escaping).
func Quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes (invalid UTF-8 as U+FFFD)
	return string(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
}

// CPUSeconds is the process's user+system CPU time. Benchmarks divide by it
// to report MB per CPU-second, the per-core figure, which does not depend on
// how busy a shared machine is (wall-clock MB/s does).
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// ReadFiles returns the contents of the regular text files under dir
// (links not followed; files over 1 MiB, empty ones and binary ones —
// invalid UTF-8 or a NUL byte — skipped), in walk order: the files shape's
// Options.Files for gen -files DIR and the package benchmarks.
func ReadFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Size() == 0 || info.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			return err // binary: Qwen's read_file returns a notice, not the bytes
		}
		out = append(out, string(b))
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("shape: no regular files of 1 byte to 1 MiB under %s", dir)
	}
	return out, err
}
