package tailproof

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// TestQwenTranscriptTurnAgreesWithLedgerCore: on every Qwen session kept
// in testdata (the replay goldens, among them the real 0.24.4 daemon's
// cron recording, and the real daemon's crash states under
// simulations/qwenserve/testdata/evidence), the verdict machines/turnverdict
// gives the transcript's last turn alone (ADR 0041) never contradicts the
// turn object the ledger-based status gives the same prompt (ADR 0033):
// unknown against decided is fine, completed against interrupted is not.
func TestQwenTranscriptTurnAgreesWithLedgerCore(t *testing.T) {
	type session struct{ root, cwd, id string }
	var ss []session
	goldens, _ := filepath.Glob("testdata/replay/projects/-work-golden/chats/*.jsonl")
	for _, g := range goldens {
		if !strings.HasSuffix(g, ".ledger.jsonl") {
			ss = append(ss, session{"testdata/replay", "/work/golden", strings.TrimSuffix(filepath.Base(g), ".jsonl")})
		}
	}
	cases, _ := filepath.Glob("simulations/qwenserve/testdata/evidence/*/case.txt")
	for _, c := range cases {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		s := session{root: filepath.Dir(c)}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "cwd" {
				s.cwd = f[1]
			} else if len(f) == 2 && f[0] == "session" {
				s.id = f[1]
			}
		}
		ss = append(ss, s)
	}
	if len(ss) < 8 {
		t.Fatalf("found %d sessions", len(ss))
	}
	ctx := context.Background()
	compared := 0
	for _, s := range ss {
		st := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(s.root, s.cwd))
		data, err := readTranscript(ctx, st, s.id)
		if err != nil {
			continue // no transcript: no turn to decide
		}
		open := func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		rep, err := TurnStatus(ctx, open, TurnStatusOptions{Harness: qwen.Harness(), WriterStopped: true})
		if err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		if rep.Last == nil || rep.Last.Verdict == turnverdict.Unknown {
			continue
		}
		status, err := Status(ctx, st, s.id, StatusOptions{Ledger: st})
		if err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		core := StatusSummary(status)
		if core == nil || core.ID != rep.Last.Turn || core.Verdict == string(turnverdict.Unknown) {
			continue
		}
		compared++
		if core.Verdict != string(rep.Last.Verdict) {
			t.Errorf("%s: turn %s: the transcript alone says %s, the ledger core %s (%s)\n%s", s.id, core.ID, rep.Last.Verdict, core.Verdict, core.Because, rep.Last.Describe())
		}
	}
	t.Logf("%d sessions, %d last turns decided by both", len(ss), compared)
	if compared == 0 {
		t.Fatal("no last turn was decided by both")
	}
}

func readTranscript(ctx context.Context, st *jsonl.QwenStore, id string) ([]byte, error) {
	rc, err := st.OpenTranscript(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
