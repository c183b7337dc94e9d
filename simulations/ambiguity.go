package simulations

import (
	"crypto/sha256"
	"regexp"
	"slices"
	"strconv"

	"github.com/tailproof/tailproof/events/qwen"
)

// Ambiguity measures how much of a class's evidence cannot be decided by any
// rule that, like both rule sets, reads identifiers only for equality and
// timestamps only for order: each dangling prompt's evidence (the ledger and
// the transcript as the crash left them, and which prompt is the target) is
// reduced to a key with every identifier renamed by first appearance and
// every timestamp replaced by its rank. Two crashes with the same key and
// different truths (one completed, one not) are indistinguishable to such a
// rule: whatever it stamps there is wrong on one of them.
type Ambiguity struct {
	Class string `json:"class"`
	// Dangling prompts whose key was also seen with the other truth.
	Ambiguous int `json:"ambiguous"`
	// Correct stamps of each rule set that fell on such keys (each is
	// matched, on the same evidence, by a crash where that stamp is wrong).
	ReferenceCorrect int `json:"referenceCorrectOnAmbiguous"`
	TailproofCorrect int `json:"tailproofCorrectOnAmbiguous"`
}

// DanglingKey is one dangling prompt's evidence key (evidenceKey) and how
// each rule set fared on it; collected only for Config.Ambiguity.
type DanglingKey struct {
	Key       [32]byte
	Completed bool // the correct stamp is completed
	TP, Ref   Outcome
}

var (
	reTime = regexp.MustCompile(`"timestamp":"[^"]*"|"at":-?[0-9.eE+]+|"endedAt":-?[0-9]+`)
	reID   = regexp.MustCompile(`r[0-9]+-[0-9]+|bg-[0-9]+|p[0-9]+`)
)

func timeValue(tok string) (float64, bool) {
	switch {
	case tok[1] == 't' && tok[2] == 'i': // "timestamp":"..."
		ms, ok := qwen.ParseTime(tok[len(`"timestamp":"`) : len(tok)-1])
		return float64(ms), ok
	case tok[1] == 'a': // "at":N
		f, err := strconv.ParseFloat(tok[len(`"at":`):], 64)
		return f, err == nil
	default: // "endedAt":N
		f, err := strconv.ParseFloat(tok[len(`"endedAt":`):], 64)
		return f, err == nil
	}
}

// evidenceKey canonicalizes the crashed evidence for target.
func evidenceKey(ledger, transcript []byte, target string) [32]byte {
	all := string(ledger) + "\x00" + string(transcript)
	var times []float64
	for _, tok := range reTime.FindAllString(all, -1) {
		if v, ok := timeValue(tok); ok {
			times = append(times, v)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	all = reTime.ReplaceAllStringFunc(all, func(tok string) string {
		v, ok := timeValue(tok)
		if !ok {
			return tok // a torn or odd value stays as written
		}
		i, _ := slices.BinarySearch(times, v)
		return tok[:3] + "#" + strconv.Itoa(i)
	})
	names := map[string]string{}
	rename := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		n := "#" + strconv.Itoa(len(names))
		names[id] = n
		return n
	}
	all = reID.ReplaceAllStringFunc(all, rename)
	return sha256.Sum256([]byte(all + "\x00" + rename(target)))
}

// ambiguityTally adds up keys across a run.
type ambiguityTally struct {
	seen map[[32]byte]*keyStats
}

type keyStats struct {
	completed, other bool
	// byClass counts, per class the key was seen in, its dangling prompts
	// and the correct stamps of each rule set (the same evidence can arise
	// in several classes).
	byClass map[int]*classCounts
}

type classCounts struct{ prompts, refCorrect, tpCorrect int }

func (a *ambiguityTally) add(class int, ks []DanglingKey) {
	if a.seen == nil {
		a.seen = map[[32]byte]*keyStats{}
	}
	for _, k := range ks {
		s := a.seen[k.Key]
		if s == nil {
			s = &keyStats{byClass: map[int]*classCounts{}}
			a.seen[k.Key] = s
		}
		if k.Completed {
			s.completed = true
		} else {
			s.other = true
		}
		c := s.byClass[class]
		if c == nil {
			c = &classCounts{}
			s.byClass[class] = c
		}
		c.prompts++
		if k.Ref == Correct {
			c.refCorrect++
		}
		if k.TP == Correct {
			c.tpCorrect++
		}
	}
}

func (a *ambiguityTally) report(classes []string) []Ambiguity {
	out := make([]Ambiguity, len(classes))
	for i, c := range classes {
		out[i].Class = c
	}
	for _, s := range a.seen {
		if !(s.completed && s.other) {
			continue
		}
		for class, c := range s.byClass {
			r := &out[class]
			r.Ambiguous += c.prompts
			r.ReferenceCorrect += c.refCorrect
			r.TailproofCorrect += c.tpCorrect
		}
	}
	return out
}
