package timeline_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/projections/timeline"
)

func readExample(t *testing.T, id string) (ledger, transcript []byte) {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "qwen", "projects", "-work-demo", "chats")
	l, err := os.ReadFile(filepath.Join(dir, id+".ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return l, tr
}

func TestExampleSessionTimeline(t *testing.T) {
	l, tr := readExample(t, "b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d")
	ev, err := timeline.QwenEvidence(l, tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.New()
	var kinds, order []string
	for i := range ev.Len() {
		e := ev.Event(i)
		order = append(order, fmt.Sprintf("%s:%d", e.Stream, e.Pos.Line))
		for _, it := range tl.Add(e) {
			kinds = append(kinds, string(it.Kind))
		}
	}
	// The admission goes before the prompt it admits, the terminal after the
	// turn_result of the turn it settles.
	wantOrder := []string{"ledger:1", "transcript:1", "transcript:2", "transcript:3", "transcript:4", "transcript:5",
		"ledger:2", "ledger:3", "transcript:6", "transcript:7", "transcript:8", "transcript:9", "transcript:10"}
	if d := cmp.Diff(wantOrder, order); d != "" {
		t.Fatalf("merge order (-want +got):\n%s", d)
	}
	wantKinds := []string{"admission", "prompt", "tool_call", "tool_result", "turn", "terminal", "terminal",
		"admission", "prompt", "tool_call", "tool_result", "turn", "notification"}
	if d := cmp.Diff(wantKinds, kinds); d != "" {
		t.Fatalf("kinds (-want +got):\n%s", d)
	}
	if tl.Len() != 13 || len(tl.Items()) != 13 {
		t.Fatalf("len %d items %d", tl.Len(), len(tl.Items()))
	}
	// Describe is stable: the same fold describes the same way.
	again := timeline.New()
	for i := range ev.Len() {
		again.Add(ev.Event(i))
	}
	if again.Describe() != tl.Describe() {
		t.Fatal("Describe differs between two folds of one session")
	}
	if strings.Count(tl.Describe(), "\n") != 13 {
		t.Fatalf("Describe:\n%s", tl.Describe())
	}
}

func TestDSHTimeline(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "dsh", "crashed-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := timeline.DSHEvidence(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.New()
	for i := range ev.Len() {
		tl.Add(ev.Event(i))
	}
	got := tl.Describe()
	for _, want := range []string{
		`#1 turn session_log:2 t=1781000000100 prompt=turn 1 "turn/start trigger=message"`,
		`prompt session_log:3`, `tool_call session_log:`, `terminal session_log:22`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks %q:\n%s", want, got)
		}
	}
	// The torn final fragment is not an event and survives only the full cut.
	if len(ev.Sources[0].Bad) != 1 || !bytes.Equal(ev.Cut(ev.Len())[0], b) || len(ev.Cut(ev.Len() - 1)[0]) >= len(b) {
		t.Fatalf("bad %v", ev.Sources[0].Bad)
	}
}

func TestClipKeepsTextOnOneBoundedLine(t *testing.T) {
	long := strings.Repeat("ab\ncd ", 100)
	l := []byte(`{"v":1,"promptId":"p","state":"in_flight","at":1}` + "\n")
	tr := []byte(`{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"1970-01-01T00:00:00.002Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":` + fmt.Sprintf("%q", long) + `}]}}` + "\n")
	ev, err := timeline.QwenEvidence(l, tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.New()
	for i := range ev.Len() {
		tl.Add(ev.Event(i))
	}
	it := tl.Items()[1]
	if strings.Contains(it.Text, "\n") || len([]rune(it.Text)) != 120 || !strings.HasSuffix(it.Text, "…") {
		t.Fatalf("%q", it.Text)
	}
}

// genSession draws a small Qwen session: admissions, terminals and
// transcript records with increasing times, sometimes a corrupt line.
func genSession(t *rapid.T) (ledger, transcript []byte) {
	var l, tr bytes.Buffer
	ms := int64(1000)
	parent := "null"
	n := rapid.IntRange(0, 12).Draw(t, "n")
	for i := range n {
		ms += int64(rapid.IntRange(0, 5).Draw(t, "dt"))
		switch rapid.IntRange(0, 4).Draw(t, "what") {
		case 0:
			fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","state":"in_flight","at":%d}`+"\n", i, ms)
		case 1:
			fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","terminal":"completed","at":%d}`+"\n", i-1, ms)
		case 2:
			tr.WriteString("{not json\n")
		default:
			uuid := fmt.Sprintf(`"u%d"`, i)
			fmt.Fprintf(&tr, `{"uuid":%s,"parentUuid":%s,"sessionId":"s","timestamp":"1970-01-01T00:00:%02d.%03dZ","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"x"}]}}`+"\n",
				uuid, parent, (ms/1000)%60, ms%1000)
			parent = uuid
		}
	}
	return l.Bytes(), tr.Bytes()
}

// TestCutProperty: a cut after n merged events decodes to exactly the first
// events of each stream the merge had taken, in file order, and cuts grow
// monotonically up to the whole files.
func TestCutProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l, tr := genSession(t)
		ev, err := timeline.QwenEvidence(l, tr, 0)
		if err != nil {
			t.Fatal(err)
		}
		prev := [2]int{}
		for n := 0; n <= ev.Len(); n++ {
			cut := ev.Cut(n)
			re, err := timeline.QwenEvidence(cut[0], cut[1], 0)
			if err != nil {
				t.Fatal(err)
			}
			if re.Len() != n {
				t.Fatalf("cut %d re-decodes to %d events", n, re.Len())
			}
			for i := range n {
				if a, b := ev.Event(i).Describe(), re.Event(i).Describe(); a != b {
					t.Fatalf("cut %d event %d: %s != %s", n, i, a, b)
				}
			}
			for s := range 2 {
				if len(cut[s]) < prev[s] || !bytes.HasPrefix([][]byte{l, tr}[s], cut[s]) {
					t.Fatalf("cut %d stream %d is not a growing prefix", n, s)
				}
				prev[s] = len(cut[s])
			}
		}
		full := ev.Cut(ev.Len())
		if !bytes.Equal(full[0], l) || !bytes.Equal(full[1], tr) {
			t.Fatal("the full cut is not the whole files")
		}
		// Within a stream the merge keeps file order.
		last := [2]int{-1, -1}
		for _, r := range ev.Order {
			if r.Index != last[r.Src]+1 {
				t.Fatalf("stream %d out of order: %d after %d", r.Src, r.Index, last[r.Src])
			}
			last[r.Src] = r.Index
		}
	})
}

func FuzzQwenEvidence(f *testing.F) {
	f.Add([]byte(`{"v":1,"promptId":"p","state":"in_flight","at":1}`+"\n"), []byte(`{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"1970-01-01T00:00:00.002Z","type":"user","message":{"role":"user","parts":[{"text":"x"}]}}`+"\n"))
	f.Add([]byte("{}\n{\"v\":1"), []byte(`{"uuid":"u"}{"uuid":"v","type":"assistant","message":{"parts":[{"functionCall":{"id":"c","name":"n"}}]}}`))
	f.Add([]byte(""), []byte("\n\n\xff\xfe"))
	f.Fuzz(func(t *testing.T, l, tr []byte) {
		ev, err := timeline.QwenEvidence(l, tr, 1<<16)
		if err != nil {
			return
		}
		tl := timeline.New()
		for i := range ev.Len() {
			for _, it := range tl.Add(ev.Event(i)) {
				if strings.Contains(it.Describe(), "\n") {
					t.Fatalf("item describes over two lines: %q", it.Describe())
				}
			}
		}
		for n := 0; n <= ev.Len(); n++ {
			cut := ev.Cut(n)
			if !bytes.HasPrefix(l, cut[0]) || !bytes.HasPrefix(tr, cut[1]) {
				t.Fatalf("cut %d is not a prefix", n)
			}
		}
	})
}

func FuzzDSHEvidence(f *testing.F) {
	f.Add([]byte(`{"type":"session","version":1,"id":"s","createdAt":1}` + "\n" + `{"type":"turn/start","seq":0,"time":2,"data":{"turn":1,"trigger":{"kind":"message"}}}` + "\n"))
	f.Add([]byte("garbage\n{\"type\":\"tool/result\",\"seq\":0,\"time\":1,\"data\":{}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := timeline.DSHEvidence(b, 1<<16)
		if err != nil {
			return
		}
		tl := timeline.New()
		for i := range ev.Len() {
			tl.Add(ev.Event(i))
		}
		_ = tl.Describe()
		if !bytes.Equal(ev.Cut(ev.Len())[0], b) {
			t.Fatal("full cut differs from the log")
		}
	})
}
