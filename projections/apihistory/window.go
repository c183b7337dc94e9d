package apihistory

import (
	"slices"

	"github.com/tailproof/tailproof/events/qwen"
)

type slot struct {
	Entry // its Sources nil while src0 is its only source
	// src0 is the record that pushed the entry: most entries never have
	// another, and their Sources are made only when a Result or a Summary
	// shows them (one allocation per record was a tenth of the fold).
	src0           Source
	shapeRunBefore int // trailing shape-notification run of the kept history before this entry
	flagRunBefore  int // trailing cold-notification run of the kept history before this entry
}

// view is the entry as the finished history shows it.
func (f *Fold) view(e *Entry) (Entry, bool) {
	if !f.opts.StripThoughts || e.Content.Parts == nil {
		return *e, true
	}
	keep := 0
	for _, p := range e.Content.Parts {
		if !p.Thought {
			keep++
		}
	}
	if keep == 0 {
		return Entry{}, false
	}
	if keep == len(e.Content.Parts) {
		return *e, true
	}
	v := *e
	v.Content.Parts = make([]qwen.Part, 0, keep)
	v.PartSource = make([]int, 0, keep)
	for i, p := range e.Content.Parts {
		if !p.Thought {
			v.Content.Parts = append(v.Content.Parts, p)
			src := 0
			if i < len(e.PartSource) {
				src = e.PartSource[i]
			}
			v.PartSource = append(v.PartSource, src)
		}
	}
	return v, true
}

func (f *Fold) kept(e *Entry) bool {
	if !f.opts.StripThoughts || e.Content.Parts == nil {
		return true
	}
	for _, p := range e.Content.Parts {
		if !p.Thought {
			return true
		}
	}
	return false
}

// runsAfter recomputes the trailing runs with s as the last entry.
func (f *Fold) runsAfter(s *slot) {
	if !f.kept(&s.Entry) {
		f.shapeRun, f.flagRun = s.shapeRunBefore, s.flagRunBefore
		return
	}
	v, _ := f.view(&s.Entry)
	f.shapeRun = 0
	if IsSystemNotificationContent(v.Content) {
		f.shapeRun = s.shapeRunBefore + 1
	}
	f.flagRun = 0
	if s.ColdNotification {
		f.flagRun = s.flagRunBefore + 1
	}
}

// sources is the entry's Sources as a Result shows them (the caller's).
func (s *slot) sources() []Source {
	if s.Sources == nil {
		return []Source{s.src0}
	}
	return slices.Clone(s.Sources)
}

func (f *Fold) push(e Entry, src Source) {
	if len(f.win) == cap(f.win) && f.off > 0 && f.off >= len(f.win) {
		// More of the array is evicted than live: slide the window down and
		// reuse it rather than growing, so a long session allocates no slots.
		n := copy(f.base[:cap(f.base)], f.win)
		clear(f.base[n : n+f.off])
		f.win, f.off = f.base[:n], 0
	}
	old := cap(f.win)
	f.win = append(f.win, slot{Entry: e, src0: src, shapeRunBefore: f.shapeRun, flagRunBefore: f.flagRun})
	if cap(f.win) != old {
		f.base, f.off = f.win[:0:cap(f.win)], 0
	}
	s := &f.win[len(f.win)-1]
	f.account(&s.Entry, 1)
	f.runsAfter(s)
}

func (f *Fold) pop() {
	s := &f.win[len(f.win)-1]
	f.account(&s.Entry, -1)
	f.shapeRun, f.flagRun = s.shapeRunBefore, s.flagRunBefore
	*s = slot{}
	f.win = f.win[:len(f.win)-1]
}

func (f *Fold) merge(rec *qwen.Record, src Source) {
	s := &f.win[len(f.win)-1]
	f.account(&s.Entry, -1)
	// Copy before appending: the entry's slices must never alias a record's
	// message or an earlier Result.
	if s.Sources == nil {
		s.Sources = []Source{s.src0}
	}
	idx := len(s.Sources)
	s.Sources = append(slices.Clip(s.Sources), src)
	s.Content.Parts = append(slices.Clip(s.Content.Parts), rec.Message.Parts...)
	ps := make([]int, len(s.Content.Parts)-len(rec.Message.Parts), len(s.Content.Parts))
	copy(ps, s.PartSource)
	for range rec.Message.Parts {
		ps = append(ps, idx)
	}
	s.PartSource = ps
	f.account(&s.Entry, 1)
	f.runsAfter(s)
}

// evict drops entries from the front that no Result can need. The bound is
// taken against the history WITHOUT its last entry (r = the run before it),
// so that a slash-command pop of that entry — the only way the history
// shrinks, and always the undo of the immediately preceding push — still
// leaves Keep exact entries before the restored run.
func (f *Fold) evict() {
	if f.opts.Unbounded || len(f.win) < 2 {
		return
	}
	last := &f.win[len(f.win)-1]
	m := f.keptInWin
	if f.kept(&last.Entry) {
		m--
	}
	r := last.shapeRunBefore
	n := 0
	for n < len(f.win)-1 && m-r > f.keep {
		s := &f.win[n]
		if f.kept(&s.Entry) {
			m--
			f.keptInWin--
			f.evictedLen++
			v, _ := f.view(&s.Entry)
			if isLastPromptCandidate(v.Content, v.PromptID != "") {
				f.evictedPromptFound, f.evictedPromptID = true, v.PromptID
			}
		}
		*s = slot{}
		n++
	}
	if n > 0 {
		f.win = f.win[n:]
		f.off += n
	}
}

// Summary is what a one-line description of the history needs, without
// Result's copy of the retained window: the full length, how many
// completed tool calls Result would list, the trailing cold-notification
// run, and the last entry as Result's Tail would end (ok false when the
// history is empty). Its cost is O(completed ids), not O(window).
func (f *Fold) Summary() (total, completed, trailing int, last Entry, ok bool) {
	total = f.evictedLen + f.keptInWin
	for id := range f.completed {
		if f.uniqueShown(id) {
			completed++
		}
	}
	for i := len(f.win) - 1; i >= 0; i-- {
		if v, kept := f.view(&f.win[i].Entry); kept {
			v.Sources = f.win[i].sources()
			return total, completed, f.flagRun, v, true
		}
	}
	return total, completed, f.flagRun, Entry{}, false
}
