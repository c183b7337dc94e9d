package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
)

const inFlight = `{"v":1,"promptId":"p1","state":"in_flight","at":1767225600000}`

// ScanLedger must count exactly what the ledger reader keeps and drops, or
// the report would contradict the decision it sits beside.
func FuzzScanLedger(f *testing.F) {
	for _, s := range []string{"", inFlight + "\n", inFlight + "\n{\"v\":1,\"prom", "\n\n  \nnot json\n" + inFlight,
		inFlight + "\r\n" + strings.Repeat("x", 70000) + "\n", "{\"v\":2}\n[]\nnull\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ScanLedger(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		n, dropped, err := ledger.ReadEach(bytes.NewReader(data), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if *rep.Records != n || rep.Undecodable != dropped {
			t.Fatalf("scan %d records %d undecodable, reader %d and %d", *rep.Records, rep.Undecodable, n, dropped)
		}
		if len(rep.First) != min(dropped, FirstPositions) {
			t.Fatalf("%d positions for %d undecodable lines", len(rep.First), dropped)
		}
		for i := 1; i < len(rep.First); i++ {
			if rep.First[i].Offset <= rep.First[i-1].Offset || rep.First[i].Line <= rep.First[i-1].Line {
				t.Fatalf("positions out of order: %v", rep.First)
			}
		}
		// A torn tail is an undecodable last line without its newline.
		if rep.TornTail && (dropped == 0 || len(data) == 0 || data[len(data)-1] == '\n') {
			t.Fatalf("torn tail reported for a ledger ending %q (%d undecodable)", data[max(0, len(data)-8):], dropped)
		}
	})
}

func TestScanLedgerReport(t *testing.T) {
	noise := make([]byte, 100_000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(r.UintN(256))
	}
	rep, err := ScanLedger(bytes.NewReader(noise))
	if err != nil || *rep.Records != 0 || rep.Undecodable < 100 || rep.First[0] != (Position{Line: 1, Offset: 0, Reason: rep.First[0].Reason}) {
		t.Fatalf("random bytes: %+v %v", rep, err)
	}
	rep.Path = "l"
	if w := (InputReport{Ledger: &rep}).Warnings(); len(w) != 1 || !strings.Contains(w[0], "mostly undecodable: is it a ledger?") ||
		!strings.Contains(w[0], "first at line 1, offset 0; line 2, offset") {
		t.Fatalf("warning %q", w)
	}
	torn := inFlight + "\n" + inFlight[:20]
	rep, _ = ScanLedger(strings.NewReader(torn))
	rep.Path = "l"
	if w := (InputReport{Ledger: &rep}).Warnings(); !rep.TornTail || *rep.Records != 1 ||
		len(w) != 1 || !strings.Contains(w[0], "1 of 2 lines undecodable and ignored (a torn final line") {
		t.Fatalf("torn: %+v %q", rep, w)
	}
	clean, _ := ScanLedger(strings.NewReader(inFlight + "\n"))
	if w := (InputReport{Ledger: &clean}).Warnings(); len(w) != 0 {
		t.Fatalf("clean ledger warns %q", w)
	}
	absent := FileReport{Path: "x.ledger.jsonl", Note: "no ledger"}
	if w := (InputReport{Ledger: &absent}).Warnings(); len(w) != 1 || w[0] != "ledger x.ledger.jsonl: absent: no ledger" {
		t.Fatalf("absent: %q", w)
	}
}

func TestScanTranscript(t *testing.T) {
	open := func(s string) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
	}
	rec := `{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","cwd":"/w","version":"1","message":{"role":"user","parts":[{"text":"x"}]}}`
	rep, err := ScanTranscript(open(rec+"\n"), 0)
	if err != nil || *rep.Records != 1 || rep.Undecodable != 0 {
		t.Fatalf("clean: %+v %v", rep, err)
	}
	rep, err = ScanTranscript(open("garbage\n"+rec+"\n"+`{"uuid":"u2","type":"bogus"}`+"\n"+rec[:30]), 0)
	if err != nil || *rep.Records != 1 || rep.Undecodable != 3 || !rep.TornTail || rep.First[0].Line != 1 || rep.First[2].Line != 4 {
		t.Fatalf("mixed: %+v %v", rep, err)
	}
}

// The reconcile command's ledger report comes from the decision's own read
// of the ledger (tailproof.Options.LedgerReport): it must be what
// ScanLedger, a read of its own, reports — records, undecodable lines,
// their first positions and reasons, a torn tail — and the same whether or
// not the compact ledger fold needs a second, exact read.
func TestLedgerCollectorMatchesScan(t *testing.T) {
	const sid = "b0000000-0000-4000-8000-000000000001"
	var many strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&many, "{\"v\":1,\"promptId\":\"p%d\",\"state\":\"in_flight\",\"at\":%d}\n", i, int64(1767225600000)+2*int64(i))
		fmt.Fprintf(&many, "{\"v\":1,\"promptId\":\"p%d\",\"terminal\":\"completed\",\"at\":%d}\n", i, int64(1767225600001)+2*int64(i))
	}
	for _, data := range []string{
		"", inFlight + "\n", inFlight + "\n{\"v\":1,\"prom", "\n\n  \nnot json\n" + inFlight,
		inFlight + "\n" + strings.Repeat("x", events.DefaultMaxLineBytes+10) + "\n{\"v\":2}\n[]\nnull\n",
		// p1 again, settled and retired from the compact window long ago: an
		// exact second read.
		many.String() + "junk\n" + inFlight + "\n",
	} {
		want, err := ScanLedger(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		store := memory.NewQwenStore()
		lp, _ := store.Layout().LedgerPath(sid, jsonl.Active)
		store.Mem().WriteFile(lp, []byte(data), 0o600)
		var c LedgerCollector
		if _, err := tailproof.Reconcile(context.Background(), store, sid, tailproof.Options{
			Now: func() int64 { return 1767225700000 }, DryRun: true, LedgerReport: &c}); err != nil {
			t.Fatal(err)
		}
		got, err := c.Report()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("ledger of %d bytes: report differs (-scan +reconcile):\n%s", len(data), d)
		}
	}
}
