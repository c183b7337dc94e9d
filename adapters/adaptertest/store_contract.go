package adaptertest

import (
	"context"
	"io"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/ledger"
)

// StoreSeeder is implemented by stores the suite can put raw bytes into: the
// torn-tail and malformed-line cases need a ledger no well-behaved writer
// produces, and the tail-uuid cases need transcripts, which the Store
// contract only reads. Both replace the file's whole content.
type StoreSeeder interface {
	SeedLedger(ctx context.Context, sessionID string, data []byte) error
	SeedTranscript(ctx context.Context, sessionID string, data []byte) error
}

// LedgerStater is implemented by stores with real files, so the suite can
// check that a ledger is never created wider than 0600.
type LedgerStater interface {
	StatLedger(ctx context.Context, sessionID string) (fs.FileInfo, error)
}

// LedgerRecentTailBytes is the window callers read recent terminals from
// (Qwen's RECENT_TERMINALS_TAIL_BYTES).
const LedgerRecentTailBytes = 256 << 10

// terminalsResponseLimit is Qwen's PROMPT_TERMINALS_RESPONSE_LIMIT.
const terminalsResponseLimit = 64

const sid = "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"

// RunStoreContract runs the ledger/transcript contract against stores made
// by mk; each subtest gets a fresh, empty store.
func RunStoreContract(t *testing.T, mk func(t *testing.T) adapters.Store) {
	t.Helper()
	for _, c := range storeCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, mk(t))
		})
	}
}

type storeCase struct {
	name string
	run  func(t *testing.T, s adapters.Store)
}

var ctx = context.Background()

func inFlight(p string, at int64, tail string) ledger.Record { return ledger.InFlight(p, at, tail) }
func completed(p string, at int64, stop string) ledger.Record {
	return ledger.Terminal(p, ledger.Completed, "", stop, at)
}
func terminal(p string, st ledger.TerminalState, code string, at int64) ledger.Record {
	return ledger.Terminal(p, st, code, "", at)
}

func appendRecs(t *testing.T, s adapters.Store, id string, recs ...ledger.Record) {
	t.Helper()
	for _, r := range recs {
		if err := s.AppendLedger(ctx, id, ledger.Encode(r)); err != nil {
			t.Fatalf("AppendLedger(%s): %v", r.PromptID, err)
		}
	}
}

func appendRaw(t *testing.T, s adapters.Store, id string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if err := s.AppendLedger(ctx, id, []byte(l)); err != nil {
			t.Fatalf("AppendLedger(%q): %v", l, err)
		}
	}
}

func seeder(t *testing.T, s adapters.Store) StoreSeeder {
	t.Helper()
	sd, ok := s.(StoreSeeder)
	if !ok {
		t.Skip("store does not implement adaptertest.StoreSeeder")
	}
	return sd
}

func readAll(t *testing.T, s adapters.Store, id string) []ledger.Record {
	t.Helper()
	rc, err := s.OpenLedger(ctx, id)
	if err != nil {
		t.Fatalf("OpenLedger: %v", err)
	}
	defer rc.Close()
	recs, _, err := ledger.Read(rc, false)
	if err != nil {
		t.Fatalf("ledger.Read: %v", err)
	}
	return recs
}

func readTail(t *testing.T, s adapters.Store, id string, n int64) []ledger.Record {
	t.Helper()
	rc, windowed, err := s.OpenLedgerTail(ctx, id, n)
	if err != nil {
		t.Fatalf("OpenLedgerTail: %v", err)
	}
	defer rc.Close()
	recs, _, err := ledger.Read(rc, windowed)
	if err != nil {
		t.Fatalf("ledger.Read: %v", err)
	}
	return recs
}

func rawBytes(t *testing.T, s adapters.Store, id string) []byte {
	t.Helper()
	rc, err := s.OpenLedger(ctx, id)
	if err != nil {
		t.Fatalf("OpenLedger: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read ledger: %v", err)
	}
	return b
}

func encoded(recs []ledger.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(ledger.Encode(r))
	}
	return out
}

func ids(recs []ledger.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.PromptID
	}
	return out
}

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// dangling is Qwen's danglingInFlightPromptIds: last record per prompt wins,
// ids in first-appearance order, kept when that last record is in_flight.
func dangling(recs []ledger.Record) []string {
	last := map[string]ledger.Record{}
	var order []string
	for _, r := range recs {
		if _, seen := last[r.PromptID]; !seen {
			order = append(order, r.PromptID)
		}
		last[r.PromptID] = r
	}
	out := []string{}
	for _, id := range order {
		if last[id].InFlight {
			out = append(out, id)
		}
	}
	return out
}

// recentTerminals is Qwen's recentPromptTerminalRecords.
func recentTerminals(recs []ledger.Record) []ledger.Record {
	var out []ledger.Record
	for _, r := range recs {
		if r.IsTerminal() {
			out = append(out, r)
		}
	}
	if len(out) > terminalsResponseLimit {
		out = out[len(out)-terminalsResponseLimit:]
	}
	return out
}
