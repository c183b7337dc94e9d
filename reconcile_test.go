package tailproof_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

const sid = "00000000-0000-4000-8000-0000000000aa"

func seed(t testing.TB, s *memory.QwenStore, ledgerText, transcript string) {
	t.Helper()
	l := s.Layout()
	lp, _ := l.LedgerPath(sid, jsonl.Active)
	tp, _ := l.TranscriptPath(sid, jsonl.Active)
	if err := s.Mem().WriteFile(lp, []byte(ledgerText), 0o600); err != nil {
		t.Fatal(err)
	}
	if transcript != "" {
		if err := s.Mem().WriteFile(tp, []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const transcript = `{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/work/project","version":"1","message":{"role":"user","parts":[{"text":"list the files"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/work/project","version":"1","message":{"role":"model","parts":[{"text":"README.md and src/."}]}}
`

func ExampleReconcile() {
	store := memory.NewQwenStore()
	l := store.Layout()
	lp, _ := l.LedgerPath(sid, jsonl.Active)
	tp, _ := l.TranscriptPath(sid, jsonl.Active)
	store.Mem().WriteFile(lp, append(ledger.Encode(ledger.InFlight("p1", 1767225600500, "")), '\n'), 0o600)
	store.Mem().WriteFile(tp, []byte(transcript), 0o600)

	clock := func() int64 { return 1767225700000 }
	res, err := tailproof.Reconcile(context.Background(), store, sid, tailproof.Options{Now: clock})
	if err != nil {
		panic(err)
	}
	for _, d := range res.Decisions {
		fmt.Println(d.Target, d.Verdict)
		fmt.Println(string(d.Line))
	}

	again, _ := tailproof.Reconcile(context.Background(), store, sid, tailproof.Options{Now: clock})
	fmt.Println("second run:", len(again.Decisions), "decisions")
	// Output:
	// p1 completed
	// {"v":1,"promptId":"p1","terminal":"completed","stopReason":"reconstructed_from_transcript","at":1767225700000}
	// second run: 0 decisions
}

// A ledger that cannot be read is an error, and nothing is appended.
func TestUnreadableLedgerAppendsNothing(t *testing.T) {
	s := memory.NewQwenStore()
	seed(t, s, string(ledger.Encode(ledger.InFlight("p1", 1, "")))+"\n", transcript)
	lp, _ := s.Layout().LedgerPath(sid, jsonl.Active)
	s.Mem().Inject(memory.Fault{Op: memory.OpRead, Path: lp})
	d, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }})
	if !errors.Is(err, tailproof.ErrUnreadableLedger) {
		t.Fatalf("err = %v, want ErrUnreadableLedger", err)
	}
	if len(d.Decisions) != 0 || len(d.Appended()) != 0 {
		t.Fatalf("decision %+v", d)
	}
	s.Mem().ClearFaults()
	data, _ := s.Mem().ReadFile(lp)
	if strings.Count(string(data), "\n") != 1 {
		t.Fatalf("ledger changed: %q", data)
	}
}

// A failed append is reported and the decision carries no appended record.
func TestFailedAppendIsAnError(t *testing.T) {
	s := memory.NewQwenStore()
	seed(t, s, string(ledger.Encode(ledger.InFlight("p1", 1, "")))+"\n", transcript)
	lp, _ := s.Layout().LedgerPath(sid, jsonl.Active)
	s.Mem().Inject(memory.Fault{Op: memory.OpSync, Path: lp})
	d, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }})
	if err == nil || len(d.Decisions) != 1 || d.Decisions[0].Appended != nil {
		t.Fatalf("err=%v decisions=%+v", err, d.Decisions)
	}
}

// The clock is an input: without one Reconcile refuses to run.
func TestClockIsRequired(t *testing.T) {
	if _, err := tailproof.Reconcile(context.Background(), memory.NewQwenStore(), sid, tailproof.Options{}); err == nil {
		t.Fatal("want an error without Options.Now")
	}
}

// Deterministic core: the same evidence gives the same decision, byte for byte.
func TestSameEvidenceSameDecision(t *testing.T) {
	var traces []string
	for range 3 {
		s := memory.NewQwenStore()
		seed(t, s, string(ledger.Encode(ledger.InFlight("p1", 1, "")))+"\n", transcript)
		d, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, strings.Join(d.Trace, "\n")+string(d.Decisions[0].Line))
	}
	if traces[0] != traces[1] || traces[1] != traces[2] {
		t.Fatalf("decisions differ:\n%s\n---\n%s", traces[0], traces[1])
	}
}

func TestCodecsRegistry(t *testing.T) {
	r := tailproof.Codecs()
	for _, name := range []string{"qwen-transcript", "qwen-ledger"} {
		if _, ok := r.Lookup(name); !ok {
			t.Errorf("codec %q not registered (have %v)", name, r.Names())
		}
	}
}

// failingLedger is a store whose ledger cannot be opened.
type failingLedger struct {
	*memory.QwenStore
	err error
}

func (f failingLedger) OpenLedger(context.Context, string) (io.ReadCloser, error) { return nil, f.err }

// An unreadable ledger keeps its cause: a caller can tell a cancelled
// context or a permission error from the classification.
func TestUnreadableLedgerKeepsCause(t *testing.T) {
	for _, cause := range []error{context.Canceled, fs.ErrPermission} {
		s := failingLedger{memory.NewQwenStore(), fmt.Errorf("store: open: %w", cause)}
		_, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }})
		if !errors.Is(err, tailproof.ErrUnreadableLedger) || !errors.Is(err, cause) {
			t.Errorf("err = %v: want both ErrUnreadableLedger and %v", err, cause)
		}
	}
}

// countingStore counts how often each file is opened.
type countingStore struct {
	*memory.QwenStore
	ledgerOpens, transcriptOpens int
}

func (c *countingStore) OpenLedger(ctx context.Context, id string) (io.ReadCloser, error) {
	c.ledgerOpens++
	return c.QwenStore.OpenLedger(ctx, id)
}

func (c *countingStore) OpenTranscript(ctx context.Context, id string) (io.ReadCloser, error) {
	c.transcriptOpens++
	return c.QwenStore.OpenTranscript(ctx, id)
}

// However many prompts dangle, one reconciliation reads the transcript
// twice (the chain's index, then one walk that feeds every prompt's fold)
// and the ledger once; the fence is a size, not a second read.
func TestReadsPerReconciliation(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		s := &countingStore{QwenStore: memory.NewQwenStore()}
		var l strings.Builder
		for i := range n {
			l.Write(ledger.Encode(ledger.InFlight(fmt.Sprintf("p%d", i), 1767225600000+int64(i), "")))
			l.WriteByte('\n')
		}
		seed(t, s.QwenStore, l.String(), transcript)
		res, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Decisions) != n {
			t.Fatalf("%d dangling: %d decisions", n, len(res.Decisions))
		}
		if s.transcriptOpens > 2 || s.ledgerOpens != 1 {
			t.Errorf("%d dangling: transcript opened %d times, ledger %d; want <= 2 and 1", n, s.transcriptOpens, s.ledgerOpens)
		}
	}
}
