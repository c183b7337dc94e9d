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
	return s, s.pickDSHFormat()
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

// Every command tells a dsh log's format from its content
// (dshlog.SniffFormat), so a log reads the same under any name: a v0 log
// (compressed or raw) and a v1 log, each at its own name and renamed, give
// the same status and the same replay (the path aside). dsh recover
// repairs a v0 log only under the published layout's name for its
// encoding, since dsh loads it from nowhere else, and says so. Hostile
// files: a compressed log named session.jsonl, an empty file, a torn
// header, none of which is guessed.
func TestDSHFormatFromTheContent(t *testing.T) {
	dir := t.TempDir()
	put := func(rel string, data []byte) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	frames := v0test.Frames("tools", 3)
	z := v0test.Compress(frames)
	z = z[:len(z)-5] // a torn last frame: the last turn is open
	raw := bytes.Join(frames, nil)
	raw = raw[:len(raw)-7]
	v1, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		code     int
		out, err string
	}
	cmd := func(path string, args ...string) run {
		var r run
		r.code, r.out, r.err = runCLI(t, args...)
		r.out, r.err = strings.ReplaceAll(r.out, path, "LOG"), strings.ReplaceAll(r.err, path, "LOG")
		return r
	}
	reads := func(p string) [2]run {
		return [2]run{cmd(p, "status", "--harness", "dsh", "--file", p, "--writer-stopped", "--json"), cmd(p, "replay", "--dsh", p, "--json")}
	}
	for _, c := range []struct {
		name, own string
		data      []byte
		renamed   []string
	}{
		{"v0-zstd", "z/--w--/s1/" + dshlog.V0ZstdName, z, []string{"zx/crash.bin", "zx/s1.jsonl", "zx/--w--/s1/" + dshlog.V0RawName}},
		{"v0-raw", "r/--w--/s1/" + dshlog.V0RawName, raw, []string{"rx/crash.log", "rx/s1.jsonl", "rx/--w--/s1/" + dshlog.V0ZstdName}},
		{"v1", "v1/sess-01.jsonl", v1, []string{"v1x/crash.log", "v1x/--w--/s1/" + dshlog.V0RawName, "v1x/--w--/s2/" + dshlog.V0ZstdName}},
	} {
		own := put(c.own, c.data)
		want := reads(own)
		for _, r := range want {
			if r.code != 0 || !strings.Contains(r.out, `"turn`) {
				t.Fatalf("%s at its own name: exit %d\n%s%s", c.name, r.code, r.out, r.err)
			}
		}
		for _, rel := range c.renamed {
			p := put(rel, c.data)
			if got := reads(p); got != want {
				t.Errorf("%s named %s reads otherwise than at %s:\nstatus: %+v\nwant:   %+v\nreplay: %+v\nwant:   %+v", c.name, rel, c.own, got[0], want[0], got[1], want[1])
			}
			if c.name == "v1" {
				continue
			}
			code, out, errb := runCLI(t, "dsh", "recover", "--file", p, "--json")
			if code != cli.Input || !strings.Contains(out, `"format":"`+c.name+`"`) || !strings.Contains(out, "by its content") || !strings.Contains(errb, "recover repairs it only there") {
				t.Errorf("dsh recover of %s named %s: exit %d\n%s%s", c.name, rel, code, out, errb)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, c.data) {
				t.Errorf("dsh recover of %s named %s changed the file", c.name, rel)
			}
		}
		if c.name != "v1" {
			code, out, errb := runCLI(t, "dsh", "recover", "--file", own, "--json")
			if code != 0 || !strings.Contains(out, `"format":"`+c.name+`"`) || !strings.Contains(out, `"turn/end"]`) {
				t.Errorf("dsh recover of %s at its own name: exit %d\n%s%s", c.name, code, out, errb)
			}
		}
	}
	// Hostile files: never read as another format than their content's,
	// and never a guess where neither content nor name tells.
	for _, c := range []struct {
		rel                string
		data               []byte
		reads, recoverSays string
	}{
		{"h/empty.log", nil, "the file is empty", "the file is empty"},
		{"h/torn.log", []byte(`{"type":"session","version":0,"id":"s1","cre`), "header-less", "by its content"},
		{"h/garbage.log", []byte("\x00\x01\x02\n"), "not a dsh session header", "not a dsh session header"},
		{"h2/--w--/s1/" + dshlog.V0RawName, nil, "header-less", "header-less"},
	} {
		p := put(c.rel, c.data)
		for k, args := range [][]string{{"status", "--harness", "dsh", "--file", p}, {"replay", "--dsh", p}, {"dsh", "recover", "--file", p}} {
			code, out, errb := runCLI(t, args...)
			says := c.reads
			if k == 2 {
				says = c.recoverSays
			}
			if code != cli.Input || !strings.Contains(errb, says) {
				t.Errorf("%s %s: exit %d, want %d saying %q\n%s%s", args[0], c.rel, code, cli.Input, says, out, errb)
			}
		}
	}
}
