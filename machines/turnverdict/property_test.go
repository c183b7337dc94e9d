package turnverdict_test

import (
	"fmt"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"pgregory.net/rapid"
)

// style is how a modeled harness writes turn boundaries.
type style int

const (
	explicit style = iota // Codex: task_started … task_complete / turn_aborted
	unstated              // Claude Code: no start; turn_duration at the end, after an interrupt too
	legacy                // old Codex: no start, no end; aborts recorded
)

type modelTurn struct {
	acts  []turn.Act
	truth turnverdict.Verdict // what happened, had the writer not died
}

// session models one writer: each turn is a person's prompt, rounds of tool
// calls and results, and either a final answer or a user interrupt; the
// writer appends every act in order.
func session(t *rapid.T, st style) []modelTurn {
	n := rapid.IntRange(1, 4).Draw(t, "turns")
	var out []modelTurn
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		var acts []turn.Act
		if st == explicit {
			acts = append(acts, turn.Act{Kind: turn.KindTurnStart, Turn: id})
		}
		acts = append(acts, turn.Act{Kind: turn.KindPrompt, Source: turn.SourceUser, Origin: events.OriginCarried, Text: "p" + id})
		for c := range rapid.IntRange(0, 3).Draw(t, "calls") {
			call := fmt.Sprintf("%s-c%d", id, c)
			acts = append(acts,
				turn.Act{Kind: turn.KindOutput, Stop: turn.StopOpen},
				turn.Act{Kind: turn.KindToolCall, Call: call},
				turn.Act{Kind: turn.KindToolResult, Call: call})
		}
		if rapid.Bool().Draw(t, "interrupted") {
			switch st {
			case explicit, legacy:
				acts = append(acts, turn.Act{Kind: turn.KindTurnEnd, Turn: id, End: turn.EndInterrupted, Reason: "interrupted"})
			case unstated:
				acts = append(acts, turn.Act{Kind: turn.KindInterrupt}, turn.Act{Kind: turn.KindTurnEnd, End: turn.EndUnstated})
			}
			out = append(out, modelTurn{acts, turnverdict.Interrupted})
			continue
		}
		acts = append(acts, turn.Act{Kind: turn.KindOutput, Stop: turn.StopFinal})
		switch st {
		case explicit:
			acts = append(acts, turn.Act{Kind: turn.KindTurnEnd, Turn: id, End: turn.EndCompleted})
		case unstated:
			acts = append(acts, turn.Act{Kind: turn.KindTurnEnd, End: turn.EndUnstated})
		}
		out = append(out, modelTurn{acts, turnverdict.Completed})
	}
	return out
}

// TestNoWrongVerdict crashes every modeled session after each of its acts
// (and, when a torn fragment is drawn, while writing the next one) and
// checks that no turn gets a verdict other than what happened or unknown.
// A turn the crash cut is interrupted in truth; a turn the writer finished
// is what it was.
func TestNoWrongVerdict(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := style(rapid.IntRange(0, 2).Draw(t, "style"))
		turns := session(t, st)
		var all []turn.Act
		var owner []int
		for i, mt := range turns {
			for _, a := range mt.acts {
				all = append(all, a)
				owner = append(owner, i)
			}
		}
		cut := rapid.IntRange(1, len(all)).Draw(t, "cut")
		acts := append([]turn.Act(nil), all[:cut]...)
		for i := range acts {
			acts[i].Pos = events.Position{Line: i + 1}
		}
		if cut < len(all) && rapid.Bool().Draw(t, "torn") {
			acts = append(acts, turn.Act{Kind: turn.KindDamage, Pos: events.Position{Line: cut + 1}, Torn: true,
				Damage: &events.Error{Kind: events.ErrTornTail}})
		}
		truth := func(k int) turnverdict.Verdict {
			last := 0
			for j := range all {
				if owner[j] == k {
					last = j
				}
			}
			if last >= cut {
				return turnverdict.Interrupted // the crash cut it
			}
			return turns[k].truth
		}
		d := turnverdict.NewDecider(turnverdict.Options{WriterStopped: true})
		var got []turnverdict.Decision
		for _, a := range acts {
			if dec, ok := d.Add(a); ok {
				got = append(got, dec)
			}
		}
		if dec, ok := d.Finish(); ok {
			got = append(got, dec)
		}
		for _, dec := range got {
			k := owner[dec.Start.Line-1]
			if want := truth(k); dec.Verdict != turnverdict.Unknown && dec.Verdict != want {
				t.Fatalf("style %d cut %d: turn %d is %s, decided %s\n%s", st, cut, k, want, dec.Verdict, dec.Describe())
			}
			durable := 0
			for j := 0; j < cut; j++ {
				if owner[j] == k && all[j].Kind == turn.KindPrompt {
					durable++
				}
			}
			if dec.Verdict == turnverdict.Interrupted && len(dec.Resend) != durable {
				t.Fatalf("an interrupted turn must resend its %d durable prompt(s):\n%s", durable, dec.Describe())
			}
		}
	})
}
