package recovery

import (
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
)

func excludedText(xs []ExcludedPart) string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		k := x.Source.Subtype
		if k == qwen.SubtypeChatCompression {
			k = "compressed history"
		}
		if k == "" {
			k = x.Source.Provenance.String()
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Describe is the status's stable multi-line text form (scenarios and the
// CLI print it). Part texts are printed in full: a resend is judged on exact
// bytes.
func (st Status) Describe() string {
	var b strings.Builder
	switch st.Transcript {
	case TranscriptMissing:
		b.WriteString("transcript: missing: nothing of the session's history was written (a kill right after a prompt's admission leaves this); the status describes an empty history\n")
	case TranscriptEmpty:
		b.WriteString("transcript: empty: no record was written; the status describes an empty history\n")
	}
	fmt.Fprintf(&b, "kind: %s", st.Kind)
	if st.TailKind != st.Kind {
		fmt.Fprintf(&b, " (tail: %s)", st.TailKind)
	}
	fmt.Fprintf(&b, "\nmode: %s, trimmed %d\n", st.Mode, st.Trimmed)
	if st.Degraded != "" {
		fmt.Fprintf(&b, "degraded: %s\n", st.Degraded)
	}
	if st.SettledBy != "" {
		fmt.Fprintf(&b, "settled by: turn_result %s completed\n", st.SettledBy)
	}
	for _, c := range st.CancelledBy {
		fmt.Fprintf(&b, "cancelled: %s\n", c)
	}
	if st.ContinuationMode != "" {
		fmt.Fprintf(&b, "continuation: %s\n", st.ContinuationMode)
	}
	for _, p := range st.Resend {
		fmt.Fprintf(&b, "resend: %s", apihistory.DescribePart(p.Part))
		if p.Source.UUID != "" {
			fmt.Fprintf(&b, " from %s (%s)", p.Source.UUID, sourceProvenance(p.Source))
		}
		if p.Guessed {
			b.WriteString(" guessed")
		}
		b.WriteString("\n")
		if len(p.Part.Raw) > 0 {
			fmt.Fprintf(&b, "  raw: %s\n", p.Part.Raw)
		}
	}
	for _, x := range st.Excluded {
		fmt.Fprintf(&b, "excluded: %s from %s (%s): %s\n", apihistory.DescribePart(x.Part), orDash(x.Source.UUID), sourceProvenance(x.Source), x.Reason)
	}
	for _, c := range st.DanglingCalls {
		fmt.Fprintf(&b, "dangling: %s %s from %s\n", c.ID, c.Name, orDash(c.Source.UUID))
	}
	if st.IdlessCalls > 0 {
		fmt.Fprintf(&b, "id-less calls: %d\n", st.IdlessCalls)
	}
	fmt.Fprintf(&b, "canContinue: %t: %s\n", st.CanContinue, st.Reason)
	fmt.Fprintf(&b, "requiresUserConfirmation: %t\n", st.RequiresUserConfirmation)
	for _, a := range []struct {
		name string
		a    Action
	}{{"notice", st.Support.Notice}, {"offer", st.Support.Offer}, {"auto-execute", st.Support.AutoExecute}} {
		fmt.Fprintf(&b, "%s: %s: %s\n", a.name, yesNo(a.a.Supported), a.a.Reason)
	}
	if st.Notice != "" {
		fmt.Fprintf(&b, "notice text: %s\n", st.Notice)
	}
	for _, g := range st.Guesses {
		fmt.Fprintf(&b, "guessed: %s\n", g)
	}
	if len(st.Dangling) > 0 {
		fmt.Fprintf(&b, "ledger in_flight: %s\n", strings.Join(st.Dangling, " "))
	}
	return b.String()
}

func sourceProvenance(s apihistory.Source) string {
	p := s.Provenance.String()
	if s.Origin == events.OriginNone {
		p = "no provenance"
	}
	if s.Subtype != "" {
		p = s.Subtype + ", " + p
	}
	if s.BackgroundTurn {
		p += ", background turn"
	}
	if s.DeliveredTurn {
		p += ", delivered"
	}
	return p
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
