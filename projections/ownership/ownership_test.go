package ownership

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"pgregory.net/rapid"
)

// Scenario notation (testdata/*.txt):
//
//	apply            one event per line, "<class> <phase> <turn>"; prints
//	                 "ok" or the refusal for each line
//	owner            prints Owner, then every owner
//	reset
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &State{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "reset":
				s = &State{}
				return ""
			case "apply":
				var b strings.Builder
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					ev, err := ParseEvent(line)
					if err == nil {
						err = s.Apply(ev)
					}
					if err != nil {
						fmt.Fprintf(&b, "%s: %v\n", line, err)
						continue
					}
					fmt.Fprintf(&b, "%s: ok\n", line)
				}
				return b.String()
			case "owner":
				return fmt.Sprintf("owner: %s\nall: %s\nfree: %t\n", s.Owner().Describe(), s.Describe(), s.Free())
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// The session is free exactly when every accepted start was matched by an
// accepted settle, whatever order and junk the stream holds; a refused event
// changes nothing.
func TestFreeIffAllSettledProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := &State{}
		model := map[string]Class{}
		n := rapid.IntRange(0, 60).Draw(t, "n")
		for i := 0; i < n; i++ {
			ev := Event{
				Class: Class(rapid.IntRange(0, int(Mutation)+1).Draw(t, "class")),
				Phase: Phase(rapid.IntRange(0, int(Settle)+1).Draw(t, "phase")),
				Turn:  rapid.SampledFrom([]string{"", "a", "b", "c"}).Draw(t, "turn"),
			}
			before := s.Describe()
			err := s.Apply(ev)
			cur, live := model[ev.Turn]
			valid := ev.Class > None && ev.Class <= Mutation && ev.Class != Settling &&
				ev.Phase >= Start && ev.Phase <= Settle && ev.Turn != ""
			want := valid
			switch {
			case !valid:
			case ev.Phase == Start:
				want = !live
			default:
				want = live && sameTurn(cur, ev.Class)
			}
			if (err == nil) != want {
				t.Fatalf("apply %s: err=%v, model wanted accept=%t (live=%t cur=%s)", ev, err, want, live, cur)
			}
			if err != nil {
				if s.Describe() != before {
					t.Fatalf("refused %s changed the state: %s -> %s", ev, before, s.Describe())
				}
				continue
			}
			switch ev.Phase {
			case Start:
				model[ev.Turn] = ev.Class
			case Streamed:
				if cur == Foreground {
					model[ev.Turn] = Settling
				}
			case Settle:
				delete(model, ev.Turn)
			}
			if s.Free() != (len(model) == 0) {
				t.Fatalf("free=%t, model %v", s.Free(), model)
			}
			if o := s.Owner(); (o.Class == None) != (len(model) == 0) || (o.Class != None && model[o.Turn] != o.Class) {
				t.Fatalf("owner %s, model %v", o.Describe(), model)
			}
		}
	})
}

func TestFoldReportsIndex(t *testing.T) {
	_, err := Fold([]Event{{Class: Cron, Phase: Start, Turn: "j"}, {Class: Cron, Phase: Settle, Turn: "k"}})
	if !errors.Is(err, ErrUnknownTurn) || !strings.HasPrefix(err.Error(), "ownership: event 1:") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{"cron_turn start j1", "foreground_prompt streamed p", "none start x", "x y", "", "goal_continuation settle \x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ev, err := ParseEvent(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		back, err := ParseEvent(ev.String())
		if err != nil || back != ev {
			t.Fatalf("round trip %q -> %v -> %v (%v)", s, ev, back, err)
		}
		var st State
		_ = st.Apply(ev)
	})
}
