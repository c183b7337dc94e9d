package harness

import (
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
)

// Harnesses the model writes.
const (
	Codex  = "codex"
	Claude = "claude"
)

func harnessOf(name string) turn.Harness {
	if name == Claude {
		return claude.Harness()
	}
	return codex.Harness()
}

// Profiles are the classes of sessions, per harness.
var codexProfiles = []profile{
	{name: "plain", tools: 0.3},
	{name: "tools", tools: 0.9, steer: 0.1},
	{name: "interrupts", tools: 0.7, interrupt: 0.35},
	{name: "injected+compaction", tools: 0.6, inject: 0.8, compact: 0.3},
	{name: "lost-end", tools: 0.6, lostEnd: 0.4},
	{name: "corrupt", tools: 0.6, corrupt: 0.3},
	{name: "legacy", tools: 0.6, interrupt: 0.2, legacy: true},
	{name: "paginated", tools: 0.6, interrupt: 0.1, ordinals: true},
	{name: "resumed", tools: 0.6, interrupt: 0.1, resume: true},
	{name: "resumed-paginated", tools: 0.6, ordinals: true, resume: true},
}

var claudeProfiles = []profile{
	{name: "plain", tools: 0.3},
	{name: "tools+streaming", tools: 0.9, apiError: 0.1},
	{name: "interrupts", tools: 0.7, interrupt: 0.35},
	{name: "meta+notifications", tools: 0.5, inject: 0.6, notify: 0.3},
	{name: "compaction", tools: 0.5, compact: 0.4},
	{name: "sidechains", tools: 0.9, sidechain: 0.6},
	{name: "lost-end", tools: 0.6, lostEnd: 0.4},
	{name: "corrupt", tools: 0.6, corrupt: 0.3},
	{name: "resumed", tools: 0.6, interrupt: 0.1, resume: true},
	{name: "old-writer-resumed", tools: 0.6, interrupt: 0.1, resume: true, oldWriter: true},
	{name: "stop-hooks", tools: 0.6, interrupt: 0.2, noHooks: 0.3, block: 0.3},
	{name: "2.1.39-null-stops", tools: 0.7, interrupt: 0.2, lostEnd: 0.1, noHooks: 0.3, block: 0.15, nullStops: true},
	{name: "2.1.39-upgraded-resumed", tools: 0.6, interrupt: 0.1, noHooks: 0.3, resume: true, nullStops: true, upgrade: true},
}

// Profiles lists the class names of a harness, in table order.
func Profiles(harness string) []string {
	var out []string
	for _, p := range profilesOf(harness) {
		out = append(out, p.name)
	}
	return out
}

func profilesOf(h string) []profile {
	if h == Claude {
		return claudeProfiles
	}
	return codexProfiles
}

// writer is one harness's writer model.
type writer interface{ turn(k int) }

// build writes one model run: a session of 2–6 turns by the first writer
// process; for resumed profiles that process dies after a random action
// (restart computes what it left on disk and what the restart between the
// lives did), and a second process appends 1–4 more turns to it.
func build(h string, p profile, r *rand.Rand, restart func(*session)) *session {
	s := &session{harness: h, class: p.name, fsyncs: h == Claude && !p.oldWriter && !p.nullStops, seals: h == Claude && !p.oldWriter && !p.nullStops}
	var cw *codexWriter
	var lw *claudeWriter
	var w writer
	switch h {
	case Claude:
		lw = &claudeWriter{r: r, p: p, s: s}
		lw.hooked = !p.chance(r, p.noHooks)
		w = lw
	default:
		cw = &codexWriter{r: r, p: p, s: s}
		cw.meta("0199c0de-0000-7000-8000-000000000001")
		w = cw
	}
	k := 0
	for n := 2 + r.IntN(5); k < n; k++ {
		s.turns = append(s.turns, turnTruth{finishAt: -1, abortAt: -1, lastLine: -1})
		w.turn(k)
	}
	s.resumeAt = len(s.acts)
	if p.resume && len(s.acts) > 2 {
		// The first process dies after action resumeAt-1: what it had not
		// done never happened.
		s.resumeAt = 1 + r.IntN(len(s.acts)-1)
		for _, a := range s.acts[s.resumeAt:] {
			if a.line != nil {
				s.cutLine = a.line
				break
			}
		}
		s.acts = s.acts[:s.resumeAt:s.resumeAt]
		for i := range s.turns {
			t := &s.turns[i]
			if t.finishAt >= s.resumeAt {
				t.finishAt = -1
			}
			if t.abortAt >= s.resumeAt {
				t.abortAt = -1
			}
		}
		s.repaired, s.reconciled = r.IntN(2) == 0, r.IntN(2) == 0
		corrupt(s, p, r)
		restart(s)
		// The second process picks up where the file leaves off: Codex at
		// the last valid ordinal + 1 (ordinal.rs), Claude Code on the
		// chain's last record.
		if cw != nil {
			cw.ordinal = lastOrdinal(s.base) + 1
		} else {
			lw.parent = lastUUID(s.base)
			if p.upgrade {
				// 2.1.328 takes over: it seals a torn tail before its
				// first append (its batches stay unsynced in the model:
				// the first life's crashes are computed the same way).
				lw.p.nullStops, s.seals = false, true
			}
		}
		for n := k + 1 + r.IntN(4); k < n; k++ {
			s.turns = append(s.turns, turnTruth{finishAt: -1, abortAt: -1, lastLine: -1, life: 1})
			w.turn(k)
		}
		corruptFrom(s, p, r, s.resumeAt)
		return s
	}
	corrupt(s, p, r)
	return s
}

func corrupt(s *session, p profile, r *rand.Rand) { corruptFrom(s, p, r, 0) }

// corruptFrom damages some records from action i on: a crashed append
// elsewhere on the disk left NUL bytes in them (#49876), or two writers
// spliced them (#52387). Nothing in such a line is evidence.
func corruptFrom(s *session, p profile, r *rand.Rand, i int) {
	if p.corrupt == 0 {
		return
	}
	for ; i < len(s.acts); i++ {
		if s.acts[i].line != nil && s.acts[i].turn >= 0 && r.Float64() < p.corrupt/8 {
			s.acts[i].corrupt = true
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var epoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func isoMillis(ms int64) string {
	return epoch.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
}
