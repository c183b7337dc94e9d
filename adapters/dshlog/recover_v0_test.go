package dshlog_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/dsh/v0/v0test"
)

// A v0 raw log in the shapes dsh-session 0.1.0-rc.8 declares
// (lib/types/types.d.ts) and its backend writes (toHeaderLine key order):
// one finished turn, then a turn whose tool call was recorded but has no
// result, then a torn line.
const v0Log = `{"type":"session","version":0,"id":"s1","createdAt":1781000000000,"cwd":"/w","delegationDepth":0}
{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}
{"type":"user/message","seq":1,"time":11,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"ls"}],"source":{"kind":"user"}},"surfaceOp":"append"}
{"type":"step/start","seq":2,"time":12,"data":{"turn":1,"step":1}}
{"type":"text-chunks","seq0":3,"time0":13,"data":{"turn":1,"step":1,"index":0,"dt":[1,0],"texts":["a","b","c"]}}
{"type":"assistant/message","seq":6,"time":15,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}
{"type":"tool/call","seq":7,"time":16,"data":{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{}"}}
{"type":"assistant/chunk","seq":8,"ti`

func writeV0(t *testing.T, content string) (root, path string) {
	root = t.TempDir()
	path = filepath.Join(root, "--w--", "s1", dshlog.V0RawName)
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, path
}

func TestRecoverV0RawTornTail(t *testing.T) {
	_, path := writeV0(t, v0Log)
	rec, err := dshlog.RecoverV0(vfs.OS, path, v0.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.TruncatedBytes != int64(len(`{"type":"assistant/chunk","seq":8,"ti`)) || rec.Evidence == "" {
		t.Fatalf("cut %d, evidence %q", rec.TruncatedBytes, rec.Evidence)
	}
	var types []string
	for _, c := range rec.Plan.Closers {
		types = append(types, c.Type)
	}
	if strings.Join(types, ",") != "tool/result,step/end,turn/end" || rec.Plan.Events != 11 {
		t.Fatalf("closers %v, events %d", types, rec.Plan.Events)
	}
	if !strings.Contains(string(rec.Plan.Closers[0].Line), `"code":"TOOL_OUTCOME_UNKNOWN"}},"surfaceOp":"append","sourceEventSeqs":[7]}`) {
		t.Fatalf("closer %s", rec.Plan.Closers[0].Line)
	}
	if kept, _ := os.ReadFile(rec.Evidence); string(kept) != v0Log {
		t.Fatal("the evidence copy is not the original")
	}
	again, err := dshlog.RecoverV0(vfs.OS, path, v0.Options{})
	if err != nil || !again.Plan.Noop() {
		t.Fatalf("a repaired log needs no repair: %+v %v", again.Plan, err)
	}
}

func TestRecoverV0Refuses(t *testing.T) {
	complete := strings.Join(strings.Split(v0Log, "\n")[:7], "\n") + "\n"
	for name, tc := range map[string]struct {
		content string
		setup   func(root, path string)
		want    error
	}{
		"corrupt before a turn/end": {content: complete + "{not json\n" + `{"type":"turn/end","seq":8,"time":17,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n", want: events.ErrCorrupt},
		"future version":            {content: strings.Replace(complete, `"version":0`, `"version":3`, 1), want: adapters.ErrUnsupportedVersion},
		"no delegationDepth":        {content: strings.Replace(complete, `,"delegationDepth":0`, ``, 1), want: adapters.ErrCorruptLog},
		"unknown event type":        {content: complete + `{"type":"future/thing","seq":8,"time":17,"data":{}}` + "\n", want: adapters.ErrUnsupportedVersion},
		"header names another path": {content: strings.Replace(complete, `"cwd":"/w"`, `"cwd":"/elsewhere"`, 1), want: adapters.ErrCorruptLog},
		"flat file in the root": {content: complete, want: adapters.ErrCorruptLog, setup: func(root, _ string) {
			os.WriteFile(filepath.Join(root, "--w--", "old.jsonl"), nil, 0o600)
		}},
		"mixed encodings": {content: complete, want: adapters.ErrCorruptLog, setup: func(root, _ string) {
			os.MkdirAll(filepath.Join(root, "--w--", "s2"), 0o700)
			os.WriteFile(filepath.Join(root, "--w--", "s2", dshlog.V0ZstdName), nil, 0o600)
		}},
		"a FIFO": {want: dshlog.ErrNotRegular, setup: func(_, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("no FIFOs here")
			}
		}},
		"a symlink out of the root": {content: "", want: dshlog.ErrNotRegular, setup: func(_, path string) {
			outside := filepath.Join(t.TempDir(), "x.jsonl")
			os.WriteFile(outside, []byte(complete), 0o600)
			os.Remove(path)
			os.Symlink(outside, path)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			root, path := writeV0(t, tc.content)
			if tc.setup != nil {
				tc.setup(root, path)
			}
			if tc.content == "" {
				_, err := dshlog.RecoverV0(vfs.OS, path, v0.Options{})
				if !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				return // reading a FIFO here would block, as it would block recovery
			}
			before, _ := os.ReadFile(path)
			_, err := dshlog.RecoverV0(vfs.OS, path, v0.Options{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatal("a refused log was modified")
			}
		})
	}
}

// TestRecoverV0ReadsInParallel: with two processors recovery reads a
// compressed log through ScanV0's pipeline, with one inline, and both
// recover a torn log to the same plan and the same bytes.
func TestRecoverV0ReadsInParallel(t *testing.T) {
	data := v0test.Compress(v0test.Frames("packed", 40))
	data = data[:len(data)-7] // the last frame torn
	recoverAt := func(procs int) (dshlog.RecoveryV0, []byte, int64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		root := t.TempDir()
		path := filepath.Join(root, "--w--", "s1", dshlog.V0ZstdName)
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		before := dshlog.ParallelReads()
		rec, err := dshlog.RecoverV0(vfs.OS, path, v0.Options{})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(path)
		rec.Evidence = filepath.Base(rec.Evidence)
		return rec, after, dshlog.ParallelReads() - before
	}
	one, oneBytes, oneReads := recoverAt(1)
	two, twoBytes, twoReads := recoverAt(2)
	if oneReads != 0 || twoReads != 1 {
		t.Fatalf("pipelined reads: %d with one processor (want 0), %d with two (want 1)", oneReads, twoReads)
	}
	if one.TruncatedBytes == 0 || len(one.Plan.Closers) == 0 {
		t.Fatalf("the torn log needed no repair: %+v", one)
	}
	if d := cmp.Diff(one, two); d != "" || !bytes.Equal(oneBytes, twoBytes) {
		t.Fatalf("recovery differs with two processors (-one +two):\n%s\nrepaired files equal: %v", d, bytes.Equal(oneBytes, twoBytes))
	}
}
