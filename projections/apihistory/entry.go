package apihistory

import (
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// Source identifies one record an entry was built from, with the provenance
// its envelope carried. It is what lets a later decision ask "who wrote
// this?" instead of guessing from the text.
type Source struct {
	UUID       string
	Pos        events.Position
	Type       string
	Subtype    string
	Provenance events.Provenance
	Origin     events.Origin
	// DeliveredTurn is the record's deliveredTurn flag (newer writers only;
	// Qwen Code 0.24.4 never writes it).
	DeliveredTurn bool
	// BackgroundTurn is true when the record carries Qwen Code 0.24.4's
	// backgroundTurn stamp: it was written inside a background notification
	// turn.
	BackgroundTurn bool
}

// Entry is one api-history Content plus where it came from.
type Entry struct {
	Content qwen.Content
	// PartSource[i] indexes Sources for Content.Parts[i]: a mid-turn message
	// merged into an entry keeps its own record identity per part. Nil (or
	// shorter than Parts) means the remaining parts came from Sources[0].
	PartSource []int
	// Sources are the records behind the entry, in the order they
	// contributed. Sources[0] pushed the entry (for a compressed entry: the
	// chat_compression record whose compressedHistory held it).
	Sources []Source
	// PromptID is the reference's API_HISTORY_PROMPT_ID tag: set for entries
	// pushed by a user record with no subtype and a non-empty promptId.
	PromptID string
	// ColdNotification is the systemNotificationFlags bit: the pushing record
	// has provenance "system" and subtype "notification", and is not the user
	// entry of a turn — it carries neither 0.24.4's backgroundTurn stamp nor
	// (the fallback for newer writers) deliveredTurn. 0.24.4's own
	// isSystemNotificationRecord checks provenance and subtype only, so it
	// also trims a stamped notification whose turn never answered (#12042
	// shape A); the reference rules never read this bit (they trim by
	// shape). A merge never changes it.
	ColdNotification bool
	// Compressed is true for entries copied from a compression's
	// compressedHistory: raw Content with no per-entry record behind it.
	Compressed bool
}

// Describe is the entry's stable one-line form:
// role[parts] followed by the source uuids and provenances.
func (e Entry) Describe() string {
	s := DescribeContent(e.Content)
	if e.PromptID != "" {
		s += " promptId=" + e.PromptID
	}
	if e.ColdNotification {
		s += " cold"
	}
	if e.Compressed {
		s += " compressed"
	}
	s += " <-"
	for _, src := range e.Sources {
		s += " " + src.UUID
		if src.Origin != events.OriginNone {
			s += "(" + src.Provenance.String() + ")"
		}
	}
	return s
}

// DescribeContent prints role[part, part…] with every text in full: a
// verdict is judged on exact bytes, so nothing is shortened.
func DescribeContent(c qwen.Content) string {
	var b strings.Builder
	b.WriteString(c.Role)
	b.WriteByte('[')
	for i, p := range c.Parts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(DescribePart(p))
	}
	b.WriteByte(']')
	return b.String()
}

// DescribePart prints one part: quoted full text (thought: prefixed), or the
// call identity of a function part.
func DescribePart(p qwen.Part) string {
	s := p.Describe()
	if p.Kind == qwen.PartText {
		s = strconv.Quote(p.Text)
	}
	if p.Thought && !strings.HasPrefix(s, "thought:") {
		s = "thought:" + s
	}
	return s
}
