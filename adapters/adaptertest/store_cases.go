package adaptertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/ledger"
)

var storeCases = []storeCase{
	// --- Qwen prompt-ledger.test.ts, cases 1–16 ---
	{"LedgerDropsNonStringTailUUID", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("p1", 1, "rec-tail"))
		appendRaw(t, s, sid, `{"v":1,"promptId":"p2","state":"in_flight","tailUuid":42,"at":2}`)
		same(t, "records", encoded(readAll(t, s, sid)), encoded([]ledger.Record{inFlight("p1", 1, "rec-tail"), inFlight("p2", 2, "")}))
	}},
	{"LedgerRoundTripKeepsOrder", func(t *testing.T, s adapters.Store) {
		want := []ledger.Record{inFlight("p1", 1, ""), completed("p1", 2, "end_turn"), terminal("p2", ledger.Error, "daemon_shutdown", 3)}
		appendRecs(t, s, sid, want...)
		same(t, "records", encoded(readAll(t, s, sid)), encoded(want))
	}},
	{"LedgerFirstAppendCreatesEverything", func(t *testing.T, s adapters.Store) {
		// A fresh store has no session directory yet; the first append makes it.
		appendRecs(t, s, sid, inFlight("p1", 1, ""))
		same(t, "ids", ids(readAll(t, s, sid)), []string{"p1"})
	}},
	{"LedgerFileMode0600", func(t *testing.T, s adapters.Store) {
		st, ok := s.(LedgerStater)
		if !ok {
			t.Skip("store does not implement adaptertest.LedgerStater")
		}
		if runtime.GOOS == "windows" {
			t.Skip("no POSIX modes on windows")
		}
		appendRecs(t, s, sid, inFlight("p1", 1, ""))
		fi, err := st.StatLedger(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&^0o600 != 0 {
			t.Fatalf("ledger mode %v is wider than 0600", perm)
		}
	}},
	{"LedgerMissingReadsEmpty", func(t *testing.T, s adapters.Store) {
		same(t, "records", len(readAll(t, s, sid)), 0)
		rc, windowed, err := s.OpenLedgerTail(ctx, sid, 4096)
		if err != nil {
			t.Fatalf("OpenLedgerTail of a missing ledger: %v", err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if windowed || len(b) != 0 {
			t.Fatalf("missing ledger tail = %q windowed=%v, want empty", b, windowed)
		}
	}},
	{"LedgerMalformedLinesDropped", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("p1", 1, ""))
		appendRaw(t, s, sid, `{"v":1,"promptId":"p2","state":"in_fli`)
		appendRecs(t, s, sid, completed("p2", 2, ""))
		appendRaw(t, s, sid,
			`not json at all`,
			`{"v":2,"promptId":"p3","state":"in_flight","at":3}`,
			`{"v":1,"promptId":"p4","terminal":"bogus","at":4}`,
			`{"v":1,"promptId":42,"state":"in_flight","at":5}`)
		same(t, "ids", ids(readAll(t, s, sid)), []string{"p1", "p2"})
	}},
	{"LedgerSealsTornTail", func(t *testing.T, s adapters.Store) {
		sd := seeder(t, s)
		torn := string(ledger.Encode(inFlight("p1", 1, ""))) + "\n" + `{"v":1,"promptId":"p2","state":"in_fli`
		if err := sd.SeedLedger(ctx, sid, []byte(torn)); err != nil {
			t.Fatal(err)
		}
		appendRecs(t, s, sid, completed("p2", 2, ""))
		same(t, "records", encoded(readAll(t, s, sid)), encoded([]ledger.Record{inFlight("p1", 1, ""), completed("p2", 2, "")}))
		same(t, "bytes", string(rawBytes(t, s, sid)), torn+"\n"+string(ledger.Encode(completed("p2", 2, "")))+"\n")
	}},
	{"LedgerNoSealAfterNewline", func(t *testing.T, s adapters.Store) {
		a, b := ledger.Encode(inFlight("p1", 1, "")), ledger.Encode(completed("p2", 2, ""))
		appendRecs(t, s, sid, inFlight("p1", 1, ""), completed("p2", 2, ""))
		same(t, "size", len(rawBytes(t, s, sid)), len(a)+1+len(b)+1)
	}},
	{"LedgerTailLargerThanFile", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("p1", 1, ""), completed("p1", 2, ""), inFlight("p2", 3, ""))
		same(t, "ids", ids(readTail(t, s, sid, 4096)), []string{"p1", "p1", "p2"})
	}},
	{"LedgerTailDropsPartialFirstLine", func(t *testing.T, s adapters.Store) {
		for i := range 6 {
			appendRecs(t, s, sid, inFlight(fmt.Sprintf("p%d", i), 1, ""))
		}
		n := int64(len(ledger.Encode(inFlight("p0", 1, ""))) + 1)
		same(t, "ids", ids(readTail(t, s, sid, 2*n+10)), []string{"p4", "p5"})
	}},
	{"LedgerTailDropsFirstLineEvenWhenAligned", func(t *testing.T, s adapters.Store) {
		for i := range 4 {
			appendRecs(t, s, sid, inFlight(fmt.Sprintf("p%d", i), 1, ""))
		}
		n := int64(len(ledger.Encode(inFlight("p0", 1, ""))) + 1)
		same(t, "ids", ids(readTail(t, s, sid, 2*n)), []string{"p3"})
	}},
	{"LedgerDanglingLastWriteWins", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("p1", 1, ""), inFlight("p2", 2, ""), completed("p1", 3, ""), inFlight("p3", 4, ""))
		same(t, "dangling", dangling(readAll(t, s, sid)), []string{"p2", "p3"})
	}},
	{"LedgerDanglingFirstAppearanceOrder", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("later", 2, ""), inFlight("first", 1, ""), terminal("later", ledger.Error, "x", 3))
		same(t, "dangling", dangling(readAll(t, s, sid)), []string{"first"})
	}},
	{"LedgerDanglingOfEmpty", func(t *testing.T, s adapters.Store) {
		same(t, "dangling", dangling(readAll(t, s, sid)), []string{})
	}},
	{"LedgerRecentTerminalsFileOrder", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("p1", 1, ""), completed("p1", 2, ""), inFlight("p2", 3, ""),
			terminal("p2", ledger.Interrupted, "daemon_lost", 4))
		same(t, "ids", ids(recentTerminals(readAll(t, s, sid))), []string{"p1", "p2"})
	}},
	{"LedgerRecentTerminalsLimit64", func(t *testing.T, s adapters.Store) {
		for i := range 70 {
			p := fmt.Sprintf("p%d", i)
			appendRecs(t, s, sid, inFlight(p, int64(2*i), ""), completed(p, int64(2*i+1), ""))
		}
		got := ids(recentTerminals(readAll(t, s, sid)))
		if len(got) != 64 || got[0] != "p6" || got[63] != "p69" {
			t.Fatalf("recent terminals = %d ids, first %q last %q; want 64, p6, p69", len(got), got[0], got[len(got)-1])
		}
	}},

	// --- Qwen prompt-terminal-ledger.test.ts: the recent-terminals window (case 37) ---
	{"LedgerRecentTerminalsWindow256KiB", func(t *testing.T, s adapters.Store) {
		lines := []string{string(ledger.Encode(terminal("sentinel", ledger.Completed, "", 0)))}
		for i := range 5000 {
			lines = append(lines, string(ledger.Encode(inFlight(fmt.Sprintf("filler%06d", i), int64(i+1), ""))))
		}
		// Seeding is only a shortcut past 5000 fsyncs; the bytes are the same.
		if sd, ok := s.(StoreSeeder); ok {
			if err := sd.SeedLedger(ctx, sid, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
				t.Fatal(err)
			}
		} else {
			appendRaw(t, s, sid, lines...)
		}
		for i := range 10 {
			appendRecs(t, s, sid, completed(fmt.Sprintf("tail%02d", i), int64(10000+i), ""))
		}
		got := ids(recentTerminals(readTail(t, s, sid, LedgerRecentTailBytes)))
		if len(got) != 10 || got[0] != "tail00" || got[9] != "tail09" {
			t.Fatalf("terminals in the 256 KiB window = %v", got)
		}
	}},

	// --- Qwen prompt-terminal-ledger.test.ts case 42 and the §2.3 rules ---
	{"TranscriptTailUUIDMissing", func(t *testing.T, s adapters.Store) {
		if id, ok := s.TranscriptTailUUID(ctx, sid); ok {
			t.Fatalf("missing transcript gave marker %q", id)
		}
	}},
	{"TranscriptTailUUIDCases", func(t *testing.T, s adapters.Store) {
		sd := seeder(t, s)
		big := `{"uuid":"big","pad":"` + strings.Repeat("x", 70<<10) + `"}`
		// exact fills the 64 KiB window with one record preceded by a newline.
		exactPad := 64<<10 - len(`{"uuid":"exact","pad":""}`)
		exact := `{"uuid":"exact","pad":"` + strings.Repeat("y", exactPad) + `"}`
		for _, c := range []struct {
			name, data, want string
		}{
			{"empty", "", ""},
			{"two records", `{"uuid":"u1"}` + "\n" + `{"uuid":"a1"}` + "\n", "a1"},
			{"no final newline", `{"uuid":"u1"}` + "\n" + `{"uuid":"a1"}`, "a1"},
			{"torn final record", `{"uuid":"u1"}` + "\n" + `{"uuid":"a1","text":"answ`, ""},
			{"trailing empty lines", `{"uuid":"u1"}` + "\n\n\n", "u1"},
			{"whitespace final line", `{"uuid":"u1"}` + "\n  \n", ""},
			{"no uuid", `{"uuid":"u1"}` + "\n" + `{"type":"x"}` + "\n", ""},
			{"empty uuid", `{"uuid":"u1"}` + "\n" + `{"uuid":""}` + "\n", ""},
			{"numeric uuid", `{"uuid":"u1"}` + "\n" + `{"uuid":7}` + "\n", ""},
			{"case-sensitive key", `{"UUID":"u1"}` + "\n", ""},
			{"not an object", `["uuid"]` + "\n", ""},
			{"record larger than the window", `{"uuid":"u1"}` + "\n" + big + "\n", ""},
			{"record larger than the window, no newline", `{"uuid":"u1"}` + "\n" + big, ""},
			{"window starts on a line boundary", `{"uuid":"u1"}` + "\n" + exact, "exact"},
			{"window starts one byte into the line", `{"uuid":"u1"}` + "\n" + exact + " ", ""},
			{"escaped uuid", `{"uuid":"a\u00e9"}` + "\n", "aé"},
		} {
			t.Run(c.name, func(t *testing.T) {
				if err := sd.SeedTranscript(ctx, sid, []byte(c.data)); err != nil {
					t.Fatal(err)
				}
				got, ok := s.TranscriptTailUUID(ctx, sid)
				if ok != (c.want != "") || got != c.want {
					t.Fatalf("TranscriptTailUUID = (%q, %v), want %q", got, ok, c.want)
				}
			})
		}
	}},

	// --- tailproof's own ---
	{"TranscriptMissingIsNotFound", func(t *testing.T, s adapters.Store) {
		rc, err := s.OpenTranscript(ctx, sid)
		if err == nil {
			rc.Close()
			t.Fatal("OpenTranscript of a missing transcript succeeded")
		}
		if !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("error %v does not wrap adapters.ErrNotFound", err)
		}
	}},
	{"TranscriptStreamsWholeFileRepeatably", func(t *testing.T, s adapters.Store) {
		sd := seeder(t, s)
		data := `{"uuid":"u1"}` + "\n" + `{"uuid":"a1"}` + "\n" + `{"torn`
		if err := sd.SeedTranscript(ctx, sid, []byte(data)); err != nil {
			t.Fatal(err)
		}
		for pass := range 2 {
			rc, err := s.OpenTranscript(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || string(b) != data {
				t.Fatalf("pass %d: read %q, %v", pass, b, err)
			}
		}
	}},
	{"LedgerRejectsLineWithNewline", func(t *testing.T, s adapters.Store) {
		for _, l := range []string{"", "a\nb", "a\n"} {
			if err := s.AppendLedger(ctx, sid, []byte(l)); err == nil {
				t.Fatalf("AppendLedger(%q) succeeded; a line must be one non-empty record", l)
			}
		}
		same(t, "bytes", string(rawBytes(t, s, sid)), "")
	}},
	{"LedgerCancelledContext", func(t *testing.T, s adapters.Store) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.AppendLedger(c, sid, ledger.Encode(inFlight("p1", 1, ""))); !errors.Is(err, context.Canceled) {
			t.Fatalf("append with a cancelled context = %v", err)
		}
	}},
	{"LedgerTailWindowIsFixedAtOpen", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("p1", 1, ""), inFlight("p2", 2, ""))
		rc, _, err := s.OpenLedgerTail(ctx, sid, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		appendRecs(t, s, sid, inFlight("p3", 3, ""))
		recs, _, err := ledger.Read(rc, false)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "ids", ids(recs), []string{"p1", "p2"})
	}},
	{"LedgerSessionsAreIsolated", func(t *testing.T, s adapters.Store) {
		other := "7c1d2e3f-0000-4000-8000-000000000001"
		appendRecs(t, s, sid, inFlight("p1", 1, ""))
		appendRecs(t, s, other, inFlight("q1", 1, ""))
		same(t, "ids", ids(readAll(t, s, sid)), []string{"p1"})
		same(t, "ids", ids(readAll(t, s, other)), []string{"q1"})
	}},
	{"LedgerHostileSessionIDs", func(t *testing.T, s adapters.Store) {
		appendRecs(t, s, sid, inFlight("mine", 1, ""))
		for _, id := range []string{"", ".", "..", "../" + sid, "a/b", `a\b`, "a\x00b", "/etc/passwd",
			"../../../../tmp/x", sid + ".ledger", "..\\..\\x", "a\nb"} {
			err := s.AppendLedger(ctx, id, ledger.Encode(inFlight("evil", 2, "")))
			if err != nil {
				if !errors.Is(err, adapters.ErrInvalidSessionID) {
					t.Errorf("AppendLedger(%q) = %v; a refusal must wrap adapters.ErrInvalidSessionID", id, err)
				}
				if _, err := s.OpenLedger(ctx, id); !errors.Is(err, adapters.ErrInvalidSessionID) {
					t.Errorf("OpenLedger(%q) = %v, want a refusal like AppendLedger's", id, err)
				}
				if _, err := s.OpenTranscript(ctx, id); !errors.Is(err, adapters.ErrInvalidSessionID) {
					t.Errorf("OpenTranscript(%q) = %v, want a refusal", id, err)
				}
				if _, ok := s.TranscriptTailUUID(ctx, id); ok {
					t.Errorf("TranscriptTailUUID(%q) found a marker", id)
				}
				continue
			}
			// Escaped rather than refused: it must be a session of its own.
			if got := ids(readAll(t, s, id)); !cmp.Equal(got, []string{"evil"}) {
				t.Errorf("escaped id %q reads back %v", id, got)
			}
		}
		same(t, "untouched session", ids(readAll(t, s, sid)), []string{"mine"})
	}},
	{"LedgerConcurrentAppendersNeverFuse", func(t *testing.T, s adapters.Store) {
		const writers, each = 16, 40
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					// Different lengths per writer make a fused line undecodable.
					p := fmt.Sprintf("w%02d-%s-%03d", w, strings.Repeat("x", w), i)
					if err := s.AppendLedger(ctx, sid, ledger.Encode(inFlight(p, int64(i), ""))); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		raw := rawBytes(t, s, sid)
		recs, dropped, err := ledger.Read(bytes.NewReader(raw), false)
		if err != nil || dropped != 0 {
			t.Fatalf("ledger after concurrent appends: dropped %d lines, err %v", dropped, err)
		}
		if len(recs) != writers*each || bytes.Count(raw, []byte{'\n'}) != writers*each {
			t.Fatalf("%d records / %d lines, want %d", len(recs), bytes.Count(raw, []byte{'\n'}), writers*each)
		}
		next := map[string]int{}
		for _, r := range recs {
			w := r.PromptID[:3]
			if want := fmt.Sprintf("%03d", next[w]); !strings.HasSuffix(r.PromptID, want) {
				t.Fatalf("writer %s: record %s out of order (want #%s)", w, r.PromptID, want)
			}
			next[w]++
		}
	}},
}
