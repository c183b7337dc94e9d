package recovery

import (
	"fmt"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/interruption"
)

func idlessCalls(t interruption.Tail) int {
	if len(t.Entries) == 0 {
		return 0
	}
	n := 0
	for _, p := range t.Entries[len(t.Entries)-1].Content.Parts {
		if p.Kind == qwen.PartFunctionCall && (!p.HasID || p.ID == "") {
			n++
		}
	}
	return n
}

func (st *Status) guess(why string) {
	st.Guessed = true
	st.Guesses = append(st.Guesses, why)
}

// resendPrompt keeps the parts a continuation may resend: those written by
// the user or by a tool. System-like provenance (notification, cron, goal
// runtime, anything "system") is never user intent. A record without
// provenance is judged by its subtype and shape, and the status says so.
func (st *Status) resendPrompt(parts []interruption.Part) {
	for _, p := range parts {
		src := p.Source
		reason, guessed := excludeReason(p.Part, src)
		if guessed {
			st.guess(fmt.Sprintf("record %s carries no provenance: its part was judged by shape", orDash(src.UUID)))
		}
		if reason != "" {
			st.Excluded = append(st.Excluded, ExcludedPart{Part: p.Part, Source: src, Reason: reason})
			continue
		}
		st.Resend = append(st.Resend, ResendPart{Part: p.Part, Source: src, Guessed: guessed})
	}
}

func excludeReason(p qwen.Part, src apihistory.Source) (reason string, guessed bool) {
	switch src.Subtype {
	case qwen.SubtypeChatCompression:
		// A compressed entry has no record of its own: whether the user or
		// the summarizer wrote it is unknown, so it is not resent as intent.
		return "from compressed history: the entry has no record of its own, so its author is unknown", false
	case qwen.SubtypeNotification, qwen.SubtypeCron:
		return "a " + src.Subtype + " record is not user input", src.Origin == events.OriginNone
	}
	if src.Origin != events.OriginNone {
		if src.Provenance.IsSystemLike() {
			return "written with " + src.Provenance.String() + " provenance, not by the user", false
		}
		return "", false
	}
	if p.Kind == qwen.PartFunctionResponse {
		return "", false // a tool result is structural: its shape is its provenance
	}
	if p.HasText && apihistory.IsSystemNotificationContent(qwen.Content{Role: "user", Parts: []qwen.Part{p}}) {
		return "a task-notification envelope in a record without provenance (judged by shape)", true
	}
	return "", true
}
