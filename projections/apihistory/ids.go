package apihistory

import (
	"hash/maphash"

	"github.com/tailproof/tailproof/events/qwen"
)

// idCount is how many calls and responses of one tool-call id the history holds.
type idCount struct{ calls, results int32 }

// idKey is the key under which the fold counts an id over the whole history
// (tool-call ids, prompt ids, daemon prompt ids): 128 bits of maphash under
// two seeds drawn per process, not the string. Counting keys instead of
// strings is what bounds the fold at a few words per id (ADR 0030). Two ids
// sharing a key would add to each other's counts, which can make an id look
// repeated or — when one of them had no occurrence of its own — unique, so
// the key is wide enough that this does not happen: the chance is about
// n/2^128 for a query among n ids (3·10^-33 for a million), and it cannot be
// aimed at, since the seeds are secret and per process.
type idKey struct{ hi, lo uint64 }

var idSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func keyOf(id string) idKey {
	return idKey{maphash.String(idSeeds[0], id), maphash.String(idSeeds[1], id)}
}

// unique is hasUniqueToolResult over the whole current history.
func (f *Fold) unique(id string) bool {
	if f.fp != nil {
		return id != "" && f.fpUnique(id)
	}
	c := f.ids[keyOf(id)]
	return id != "" && c.calls == 1 && c.results == 1
}

// uniqueShown is hasUniqueToolResult over the finished history, where
// StripThoughts may have dropped a thought-flagged call or response.
func (f *Fold) uniqueShown(id string) bool {
	if !f.opts.StripThoughts {
		return f.unique(id)
	}
	c := f.idsShown[keyOf(id)]
	return id != "" && c.calls == 1 && c.results == 1
}

func count(m map[idKey]idCount, p qwen.Part, sign int32) {
	k := keyOf(p.ID)
	c := m[k]
	if p.Kind == qwen.PartFunctionCall {
		c.calls += sign
	} else {
		c.results += sign
	}
	if c.calls == 0 && c.results == 0 {
		delete(m, k)
	} else {
		m[k] = c
	}
}

// account adds (sign=1) or removes (sign=-1) an entry's ids and tag.
func (f *Fold) account(e *Entry, sign int32) {
	for _, p := range e.Content.Parts {
		if !p.HasID || p.ID == "" || (p.Kind != qwen.PartFunctionCall && p.Kind != qwen.PartFunctionResponse) {
			continue
		}
		if f.fp != nil {
			f.fpCount(p, sign)
			continue
		}
		count(f.ids, p, sign)
		if f.opts.StripThoughts && !p.Thought {
			count(f.idsShown, p, sign)
		}
	}
	if e.PromptID != "" && f.kept(e) && f.fp != nil {
		f.fpTag(e.PromptID, sign)
	} else if e.PromptID != "" && f.kept(e) {
		k := keyOf(e.PromptID)
		f.tags[k] += sign
		if f.tags[k] == 0 {
			delete(f.tags, k)
		}
	}
	if f.kept(e) {
		f.keptInWin += int(sign)
	}
}
