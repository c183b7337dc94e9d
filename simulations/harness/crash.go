package harness

import (
	"bytes"
	"math/rand/v2"
	"sort"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
)

// Crash kinds.
const (
	// KindKill: the process dies between two writes; the page cache keeps
	// everything it wrote.
	KindKill = "kill"
	// KindTorn: the process dies inside a write (write_all of one Codex
	// line, the write of one Claude Code batch): a prefix of it lands.
	KindTorn = "torn"
	// KindPower: the machine loses power; of what was written and never
	// fsynced any prefix survives (Codex never fsyncs; Claude Code 2.1.328
	// fsyncs each batch, so it loses at most the write in flight).
	KindPower = "power"
)

var kindNames = []string{KindKill, KindTorn, KindPower}

// placed is where an action's line landed in the durable bytes.
type placed struct {
	off, end int // [off, end): the line's bytes (without its newline) as far as they landed
	act      int
	full     bool // every byte of the line landed (its newline too, unless last)
	// landed: every byte the writer wrote for this action reached the disk
	// — true for a damaged line too; false when a crash cut it or lost it.
	landed bool
}

// disk is the session file a crash leaves, and where each action's bytes are.
type disk struct {
	b      []byte
	placed []placed // in offset order
}

// mangle is a line the model damaged on purpose: its first half, then a
// run of NUL bytes where the rest should be.
func mangle(line []byte) []byte {
	out := append([]byte{}, line[:len(line)/2]...)
	return append(out, bytes.Repeat([]byte{0}, 8+len(line)/4)...)
}

// written is the byte stream the writer handed the kernel for actions
// [from, to], and where each line is in it. A batching writer (Claude Code
// 2.1.328) has written only up to its last flush; the rest is still in its
// queue.
func (s *session) written(from, to int) ([]byte, []placed) {
	var all []byte
	var pls []placed
	committed, nlines := 0, 0
	for i := from; i <= to; i++ {
		a := s.acts[i]
		if a.line != nil {
			line := a.line
			if a.corrupt {
				line = mangle(line)
			}
			p := placed{off: len(all), act: i}
			all = append(all, line...)
			p.end = len(all)
			all = append(all, '\n')
			pls = append(pls, p)
		}
		if !s.fsyncs || a.flush {
			committed, nlines = len(all), len(pls)
		}
	}
	return all[:committed], pls[:nlines]
}

// nextWrite is the next write after action i: Codex's next line; for a
// batching writer, nothing (its next batch is not being written yet).
func (s *session) nextWrite(i int) ([]byte, placed, bool) {
	if s.fsyncs {
		return nil, placed{}, false
	}
	limit := len(s.acts)
	if i < s.resumeAt {
		limit = s.resumeAt
	}
	for j := i + 1; j < limit; j++ {
		if s.acts[j].line != nil {
			line := s.acts[j].line
			if s.acts[j].corrupt {
				line = mangle(line)
			}
			return append(append([]byte{}, line...), '\n'), placed{act: j}, true
		}
	}
	if limit == s.resumeAt && s.cutLine != nil {
		// The first writer died inside the write it never finished.
		return append(append([]byte{}, s.cutLine...), '\n'), placed{act: -1}, true
	}
	return nil, placed{}, false
}

// crashDisk is what a crash of kind after action i leaves on disk. from
// is the first action of the crashed writer's life and base what the file
// held when it started.
//
// A torn write that landed every byte of its record but the newline wrote
// the record: the crash then counts as after that action, which crashDisk
// returns as eff.
func (s *session) crashDisk(base disk, from, i int, kind string, r *rand.Rand) (d disk, eff int) {
	eff = i
	d = disk{b: append([]byte{}, base.b...), placed: append([]placed{}, base.placed...)}
	start := len(d.b)
	if s.seals && start > 0 && d.b[start-1] != '\n' && i >= from {
		d.b = append(d.b, '\n')
		start++
	}
	w, pl := s.written(from, i)
	switch kind {
	case KindTorn:
		if s.fsyncs {
			// The batch that ends at action i was being written.
			if i >= from && s.acts[i].flush {
				w0, _ := s.written(from, i-1)
				cut := len(w0) + r.IntN(len(w)-len(w0)+1)
				w = w[:cut]
			}
		} else if nw, np, ok := s.nextWrite(i); ok {
			np.off = len(w)
			np.end = np.off + len(nw) - 1
			cut := r.IntN(len(nw))
			if np.act < 0 {
				cut = r.IntN(len(nw) - 1) // the dropped action never happened
			} else if cut == len(nw)-1 {
				eff = np.act
			}
			w = append(append([]byte{}, w...), nw[:cut]...)
			pl = append(pl, np)
		}
	case KindPower:
		if !s.fsyncs {
			w = w[:r.IntN(len(w)+1)]
		}
	}
	for _, p := range pl {
		if p.off >= len(w) {
			break
		}
		p.landed = p.end <= len(w) && (p.end == len(w) || w[p.end] == '\n')
		if p.act < 0 {
			p.end = len(w)
			p.off += start
			p.end += start
			d.placed = append(d.placed, p)
			continue
		}
		a := s.acts[p.act]
		e := p.off + len(a.line)
		// Whole: every byte and then the newline, or the end of the file
		// (a reader takes a final line that decodes).
		p.full = !a.corrupt && e <= len(w) && (e == len(w) || w[e] == '\n')
		p.end = min(p.end, len(w))
		p.off += start
		p.end += start
		d.placed = append(d.placed, p)
	}
	d.b = append(d.b, w...)
	return d, eff
}

// owner is the action whose bytes hold offset off (-1: none).
func (d disk) owner(off int64) int {
	i := sort.Search(len(d.placed), func(i int) bool { return int64(d.placed[i].off) > off }) - 1
	for ; i >= 0; i-- {
		if d.placed[i].act >= 0 {
			return d.placed[i].act
		}
	}
	return -1
}

// landed reports whether every byte the writer wrote for action act is on
// the disk (a crash neither cut nor lost it).
func (d disk) landed(act int) bool {
	for _, p := range d.placed {
		if p.act == act {
			return p.landed
		}
	}
	return false
}

// standalone reports whether action act's line is in the file whole, on a
// line of its own — so a reader can see it.
func (d disk) standalone(act int) bool {
	for _, p := range d.placed {
		if p.act == act {
			return p.full && (p.off == 0 || d.b[p.off-1] == '\n')
		}
	}
	return false
}

// lastOrdinal is the ordinal of the last line Codex's reverse scan accepts
// (ordinal.rs: rejected lines are skipped), -1 when none has one.
func lastOrdinal(b []byte) int {
	var c codex.Codec
	lines := bytes.Split(b, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		evs, err := c.DecodeLine(nil, events.Line{Bytes: lines[i], Terminated: true})
		if err != nil || len(evs) == 0 {
			continue
		}
		if rec, ok := evs[0].Body.(*codex.Record); ok && rec.HasOrdinal {
			return int(rec.Ordinal)
		}
		return -1
	}
	return -1
}

// lastUUID is the uuid of the main chain's last record Claude Code reads
// back, "" when none.
func lastUUID(b []byte) string {
	var c claude.Codec
	lines := bytes.Split(b, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		evs, err := c.DecodeLine(nil, events.Line{Bytes: bytes.TrimLeft(lines[i], "\x00"), Terminated: true})
		if err != nil || len(evs) == 0 {
			continue
		}
		if rec, ok := evs[0].Body.(*claude.Record); ok && !rec.IsSidechain && rec.UUID != "" {
			return rec.UUID
		}
	}
	return ""
}
