package tailproof_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// A clock the ledger cannot hold, or one that stamps a terminal before its
// own prompt's admission, is refused with ErrInvalidClock before anything
// is appended — in a dry run too — and a clock at the admission itself or
// at the edge of the JavaScript Date range is stamped.
func TestReconcileRefusesInvalidClock(t *testing.T) {
	const admitted = 1767225600500
	led := string(append(ledger.Encode(ledger.InFlight("p1", admitted, "")), '\n'))
	for _, tc := range []struct {
		name string
		now  int64
		ok   bool
	}{
		{"before admission", admitted - 1, false},
		{"negative", -5, false},
		{"past the Date range", tailproof.MaxTimeValue + 1, false},
		{"before the Date range", -tailproof.MaxTimeValue - 1, false},
		{"max int64", 1<<63 - 1, false},
		{"at admission", admitted, true},
		{"the Date range's end", tailproof.MaxTimeValue, true},
	} {
		for _, dry := range []bool{false, true} {
			store := memory.NewQwenStore()
			seed(t, store, led, transcript)
			lp, _ := store.Layout().LedgerPath(sid, jsonl.Active)
			before, _ := store.Mem().ReadFile(lp)
			now := tc.now
			res, err := tailproof.Reconcile(context.Background(), store, sid, tailproof.Options{Now: func() int64 { return now }, DryRun: dry})
			after, _ := store.Mem().ReadFile(lp)
			if tc.ok {
				if err != nil || len(res.Appended()) != 1 || res.Appended()[0].Appended.At != now {
					t.Errorf("%s (dry %v): err %v, appended %v; want the terminal stamped %d", tc.name, dry, err, res.Appended(), now)
				}
				continue
			}
			if !errors.Is(err, tailproof.ErrInvalidClock) {
				t.Errorf("%s (dry %v): err %v, want ErrInvalidClock", tc.name, dry, err)
			}
			if len(res.Appended()) != 0 || !bytes.Equal(before, after) {
				t.Errorf("%s (dry %v): appended %v, ledger %q -> %q; want nothing appended", tc.name, dry, res.Appended(), before, after)
			}
		}
	}
}
