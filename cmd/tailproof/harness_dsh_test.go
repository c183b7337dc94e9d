package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// wholeLogicalV0 is the logical form as loadDSHV0 held it in memory before
// it streamed: the header line, then one line per preserved event.
func wholeLogicalV0(t *testing.T, data []byte, enc v0.Encoding) ([]byte, error) {
	t.Helper()
	var lines []byte
	res, err := v0.Scan(bytes.NewReader(data), enc, v0.Options{}, func(r v0.Record) error {
		lines = append(r.AppendJSON(lines), '\n')
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(append(v0.AppendHeader(nil, res.Header), '\n'), lines...), nil
}

func openV0Session(t *testing.T, path string) (*harnessSession, error) {
	t.Helper()
	fsys, err := cli.Within(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	s := &harnessSession{Name: harnessDSH, Path: path, fsys: fsys}
	return s, s.loadDSHV0()
}

// TestDSHV0SessionStreamsTheLogicalLog: Open's stream of a v0 log is
// byte for byte the logical form the whole-log read built, for every
// shape, raw and compressed, whole and cut (a torn tail or frame), and a
// log that cannot be loaded is refused at load as before.
func TestDSHV0SessionStreamsTheLogicalLog(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range []string{"chunks", "packed", "tools"} {
		frames := v0test.Frames(shape, 30)
		raw := bytes.Join(frames, nil)
		z := v0test.Compress(frames)
		for _, c := range []struct {
			name string
			enc  v0.Encoding
			data []byte
		}{{dshlog.V0RawName, v0.Raw, raw}, {dshlog.V0ZstdName, v0.Zstd, z}} {
			for _, cut := range []int{len(c.data), len(c.data) - 1, len(c.data) * 3 / 4, len(c.data) / 2, 40, 0} {
				path := filepath.Join(dir, shape+"-"+filepath.Ext(c.name), c.name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, c.data[:cut], 0o644); err != nil {
					t.Fatal(err)
				}
				want, wantErr := wholeLogicalV0(t, c.data[:cut], c.enc)
				s, err := openV0Session(t, path)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("%s %s cut %d: load error %v, whole read error %v", shape, c.name, cut, err, wantErr)
				}
				if err != nil {
					continue
				}
				rc, err := s.Open(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatalf("%s %s cut %d: %v", shape, c.name, cut, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %s cut %d: streamed %d bytes, the whole read %d:\n%s", shape, c.name, cut, len(got), len(want), firstDiff(string(want), string(got)))
				}
			}
		}
	}
}

// TestDSHV0SessionStreamNoticesAChange: a log that changes between the load
// and a read (more events, or fewer) ends the stream with an error instead of
// deciding over other events than the load checked; closing the reader
// early stops the scan.
func TestDSHV0SessionStreamNoticesAChange(t *testing.T) {
	frames := v0test.Frames("tools", 20)
	path := filepath.Join(t.TempDir(), "p", dshlog.V0ZstdName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n int) {
		if err := os.WriteFile(path, v0test.Compress(frames[:n]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(len(frames) - 2)
	s, err := openV0Session(t, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{len(frames), len(frames) - 4} {
		write(n)
		rc, err := s.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(rc)
		rc.Close()
		if !errors.Is(err, errDSHV0Changed) {
			t.Fatalf("%d frames after loading %d: read error %v, want errDSHV0Changed", n, len(frames)-2, err)
		}
	}
	write(len(frames) - 2)
	rc, err := s.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
}

// A file named session.jsonl is told v0 or v1 by one rule in every command
// (dshlog.DetectFormat / RawSessionFormat): a damaged v0 header (no
// delegationDepth) is reported as v0's header error by replay as by dsh
// recover and status — not replayed as a v1 log whose every point is
// unloadable — and a v1 header there is read as v1 by status as by replay.
func TestDSHSessionJSONLIsToldAlikeByEveryCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name, "--w--", "s1", dshlog.V0RawName)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	turn := `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}` + "\n"
	bad := write("bad", `{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/w"}`+"\n"+turn)
	_, _, recoverErr := runCLI(t, "dsh", "recover", "--file", bad)
	code, out, errb := runCLI(t, "replay", "--dsh", bad)
	if code == 0 || !strings.Contains(out+errb, "delegationDepth") || !strings.Contains(recoverErr, "delegationDepth") {
		t.Fatalf("replay of a v0 log without delegationDepth: exit %d\n%s%s\ndsh recover said: %s", code, out, errb, recoverErr)
	}
	v1 := write("v1", `{"type":"session","version":1,"id":"s1","createdAt":1,"cwd":"/w"}`+"\n"+turn)
	code, out, errb = runCLI(t, "status", "--harness", "dsh", "--file", v1, "--json")
	if code != 0 || !strings.Contains(out, `"turn"`) {
		t.Fatalf("status of a v1 log named session.jsonl: exit %d\n%s%s", code, out, errb)
	}
}
