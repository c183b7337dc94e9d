package dshlog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// SniffFormat tells the format by the content whatever the name, and by
// the name only when the content cannot tell.
func TestSniffFormat(t *testing.T) {
	z := v0test.Compress(v0test.Frames("chunks", 1))
	v0raw := v0test.Header + "\n"
	v1 := `{"type":"session","version":1,"id":"s1","createdAt":1}` + "\n"
	long := `{"type":"session","version":0,"id":"` + strings.Repeat("x", dshlog.SniffBytes) + `"}` + "\n"
	for _, c := range []struct {
		head, base string
		want       dshlog.Format
	}{
		// The content decides, whatever the name.
		{string(z), "crash.bin", dshlog.FormatV0Zstd},
		{string(z), dshlog.V0RawName, dshlog.FormatV0Zstd},
		{string(z[:4]), "s.jsonl", dshlog.FormatV0Zstd}, // the magic alone: a torn first frame
		{v0raw, "crash.log", dshlog.FormatV0Raw},
		{v0raw, "s1.jsonl", dshlog.FormatV0Raw},
		{v0raw, dshlog.V0ZstdName, dshlog.FormatV0Raw},
		{v1, dshlog.V0RawName, dshlog.FormatV1},
		{v1, "crash.log", dshlog.FormatV1},
		{`{"version":0,"id":"s1","type":"session"}` + "\n", "x", dshlog.FormatV0Raw},               // any key order
		{`{"type":"session","version":0,"id":"s1","createdAt":1}` + "\n", "x", dshlog.FormatV0Raw}, // a damaged v0 header: v0's reader names it
		// A header cut short, as the writers start it.
		{`{"type":"session","version":0,"id":"s`, "crash.log", dshlog.FormatV0Raw},
		{`{"type":"session","version":1`, dshlog.V0RawName, dshlog.FormatV1},
		{`{"type":"session","version":0`, "x", dshlog.FormatV0Raw},
		{long[:dshlog.SniffBytes], "x", dshlog.FormatV0Raw}, // over the sniffed bytes
		// The content cannot tell: the name does.
		{"", dshlog.V0ZstdName, dshlog.FormatV0Zstd},
		{"", dshlog.V0RawName, dshlog.FormatV0Raw},
		{"", "s1.jsonl", dshlog.FormatV1},
		{`{"type":"session","version":2,"id":"s1"}` + "\n", dshlog.V0RawName, dshlog.FormatV0Raw},
		{`{"type":"session","version":2,"id":"s1"}` + "\n", "s1.jsonl", dshlog.FormatV1},
		{`{"type":"session","version":10`, "s1.jsonl", dshlog.FormatV1},
		{`{"type":"turn/start","seq":0}` + "\n", dshlog.V0RawName, dshlog.FormatV0Raw},
		{"not json\n", "s1.jsonl", dshlog.FormatV1},
		{`{"type":"session",`, dshlog.V0ZstdName, dshlog.FormatV0Zstd},
	} {
		got, err := dshlog.SniffFormat([]byte(c.head), c.base)
		if err != nil || got != c.want {
			t.Errorf("%.50q named %s: %v %v, want %v", c.head, c.base, got, err, c.want)
		}
	}
	// Neither tells: a clear error, never a guess.
	for _, c := range []struct{ head, base, says string }{
		{"", "crash.log", "the file is empty"},
		{`{"type":"session","version":2}` + "\n", "crash.log", "not a dsh session header"},
		{`{"type":"sess`, "crash.log", "incomplete"},
		{"\x00\x01binary\n", "crash.zst", "not a dsh session header"},
	} {
		got, err := dshlog.SniffFormat([]byte(c.head), c.base)
		if !errors.Is(err, dshlog.ErrUnknownFormat) || got != dshlog.FormatUnknown || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), c.base) {
			t.Errorf("%q named %s: %v %v, want ErrUnknownFormat saying %q", c.head, c.base, got, err, c.says)
		}
	}
}

// DetectFormat reads the file's start (a FIFO or directory is refused
// before any read) and sniffs it.
func TestDetectFormatReadsTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "renamed.zst")
	if err := os.WriteFile(p, v0test.Compress(v0test.Frames("tools", 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := dshlog.DetectFormat(vfs.OS, p); err != nil || f != dshlog.FormatV0Zstd {
		t.Fatalf("%v %v", f, err)
	}
	if _, err := dshlog.DetectFormat(vfs.OS, dir); !errors.Is(err, dshlog.ErrNotRegular) {
		t.Fatalf("a directory: %v", err)
	}
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	if _, err := dshlog.DetectFormat(vfs.OS, empty); !errors.Is(err, dshlog.ErrUnknownFormat) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("an empty file: %v", err)
	}
}

// FuzzSniffFormat: any bytes under any of the names never panic, the
// result is a format or ErrUnknownFormat, and a log starting with the
// Zstandard magic is compressed v0 whatever its name.
func FuzzSniffFormat(f *testing.F) {
	f.Add([]byte(v0test.Header+"\n"), uint8(0))
	f.Add([]byte(`{"type":"session","version":1`), uint8(1))
	f.Add(v0test.Compress(v0test.Frames("packed", 1)), uint8(2))
	names := []string{dshlog.V0ZstdName, dshlog.V0RawName, "s1.jsonl", "crash.log"}
	f.Fuzz(func(t *testing.T, head []byte, name uint8) {
		base := names[int(name)%len(names)]
		got, err := dshlog.SniffFormat(head, base)
		if (err != nil) != (got == dshlog.FormatUnknown) || err != nil && !errors.Is(err, dshlog.ErrUnknownFormat) {
			t.Fatalf("%v %v", got, err)
		}
		if strings.HasPrefix(string(head), "\x28\xb5\x2f\xfd") && got != dshlog.FormatV0Zstd {
			t.Fatalf("zstd magic told %v", got)
		}
	})
}
