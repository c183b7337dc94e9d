package apihistory

import (
	"strings"

	"github.com/tailproof/tailproof/events/qwen"
)

// idCount is how many calls and responses of one tool-call id the history holds.
type idCount struct{ calls, results int }

// unique is hasUniqueToolResult over the whole current history.
func (f *Fold) unique(id string) bool {
	c := f.ids[id]
	return id != "" && c.calls == 1 && c.results == 1
}

// uniqueShown is hasUniqueToolResult over the finished history, where
// StripThoughts may have dropped a thought-flagged call or response.
func (f *Fold) uniqueShown(id string) bool {
	if !f.opts.StripThoughts {
		return f.unique(id)
	}
	c := f.idsShown[id]
	return id != "" && c.calls == 1 && c.results == 1
}

func count(m map[string]idCount, p qwen.Part, sign int) {
	c := m[p.ID]
	if p.Kind == qwen.PartFunctionCall {
		c.calls += sign
	} else {
		c.results += sign
	}
	if c.calls == 0 && c.results == 0 {
		delete(m, p.ID)
	} else {
		m[strings.Clone(p.ID)] = c // see hint: a key must not alias the record
	}
}

// account adds (sign=1) or removes (sign=-1) an entry's ids and tag.
func (f *Fold) account(e *Entry, sign int) {
	for _, p := range e.Content.Parts {
		if !p.HasID || p.ID == "" || (p.Kind != qwen.PartFunctionCall && p.Kind != qwen.PartFunctionResponse) {
			continue
		}
		count(f.ids, p, sign)
		if f.opts.StripThoughts && !p.Thought {
			count(f.idsShown, p, sign)
		}
	}
	if e.PromptID != "" && f.kept(e) {
		f.tags[strings.Clone(e.PromptID)] += sign
		if f.tags[e.PromptID] == 0 {
			delete(f.tags, e.PromptID)
		}
	}
	if f.kept(e) {
		f.keptInWin += sign
	}
}
