package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func dshRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestDSHRecoverCrashedExample(t *testing.T) {
	src, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sess-01.jsonl")
	os.WriteFile(path, src, 0o600)

	out, errOut, code := dshRun(t, "dsh", "recover", "--file", path, "--json")
	want := `{"schemaVersion":1,"events":29,"truncatedBytes":38,"closers":["tool/result","step/end","turn/end"],"error":null,"format":"v1"}` + "\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d\nstdout %s\nstderr %s\nwant %s", code, out, errOut, want)
	}
	kept, err := os.ReadFile(path + ".broken-3664")
	if err != nil || !bytes.Equal(kept, src) {
		t.Fatalf("original not kept: %v", err)
	}
	// Recovered once, it is balanced: a second run changes nothing.
	out, _, code = dshRun(t, "dsh", "recover", "--file", path)
	if code != 0 || !strings.Contains(out, "29 events") || !strings.Contains(out, "nothing to repair") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestDSHRecoverHumanOutput(t *testing.T) {
	src, _ := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, src, 0o600)
	out, _, code := dshRun(t, "dsh", "recover", "--file", path)
	for _, s := range []string{"29 events", "cut a torn final fragment of 38 bytes", ".broken-3664", "appended tool/result, step/end, turn/end"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestDSHRecoverUnloadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	content := `{"type":"session","version":1,"id":"b","createdAt":1}` + "\n{not json\n" +
		`{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	os.WriteFile(path, []byte(content), 0o600)
	out, _, code := dshRun(t, "dsh", "recover", "--file", path, "--json")
	if code == 0 || !strings.HasPrefix(out, `{"schemaVersion":1,"events":0,"truncatedBytes":0,"closers":[],"error":"dshlog: `) || !strings.Contains(out, "line 2, offset 54") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Fatal("an unloadable log was modified")
	}
	if code != 3 {
		t.Fatalf("an unloadable log: exit %d, want 3", code)
	}
	_, errOut, code := dshRun(t, "dsh", "recover", "--file", filepath.Join(t.TempDir(), "missing.jsonl"))
	if code != 3 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("missing file: exit %d %s", code, errOut)
	}
	if _, _, code := dshRun(t, "dsh", "recover"); code != 2 {
		t.Fatalf("no --file: exit %d", code)
	}
}
