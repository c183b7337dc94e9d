package tailproof

import (
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// TurnSummary is the `turn` object of `tailproof status --harness … --json`
// (issue #15, Deliver 7): the session's last turn, its verdict with the rule
// that gave it or every veto, what a resume would resend and which calls
// were left without a result.
type TurnSummary struct {
	ID            string         `json:"id"`
	Verdict       string         `json:"verdict"`
	Because       string         `json:"because,omitempty"`
	Vetoes        []VetoJSON     `json:"vetoes"`
	HarnessEnd    string         `json:"harnessEnd"`
	EndReason     string         `json:"endReason,omitempty"`
	Resend        []ResendPrompt `json:"resend"`
	ResendVetoes  []VetoJSON     `json:"resendVetoes"`
	DanglingCalls []DanglingCall `json:"danglingCalls"`
	// Stamp is the sidecar ledger's terminal for the turn, if any.
	Stamp *StampJSON `json:"stamp,omitempty"`
}

// VetoJSON is a guard's refusal.
type VetoJSON struct {
	Guard  string `json:"guard"`
	Reason string `json:"reason"`
}

// ResendPrompt is one prompt a resume would send again.
type ResendPrompt struct {
	Text     string `json:"text"`
	Line     int    `json:"line"`
	PromptID string `json:"promptId,omitempty"`
	UUID     string `json:"uuid,omitempty"`
	// Origin says how its author is known: carried by a field, structural,
	// or guessed from its content.
	Origin string `json:"origin"`
}

// DanglingCall is a tool call left without a result. Ran is true only when
// the harness recorded that its side effect happened; false means it may or
// may not have run.
type DanglingCall struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Line int    `json:"line"`
	Ran  bool   `json:"ran"`
}

// StampJSON is a sidecar terminal.
type StampJSON struct {
	Terminal   string `json:"terminal"`
	Code       string `json:"code,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	At         int64  `json:"at"`
}

// Summary is d as the CLI prints it; stamp may be nil.
func Summary(d turnverdict.Decision, stamp *ledger.Record) TurnSummary {
	s := TurnSummary{ID: d.Turn, Verdict: string(d.Verdict), Because: d.Because,
		Vetoes: vetoesJSON(d.Vetoes), HarnessEnd: d.HarnessEnd.String(), EndReason: d.EndReason,
		Resend: []ResendPrompt{}, ResendVetoes: vetoesJSON(d.ResendVetoes), DanglingCalls: []DanglingCall{}}
	for _, p := range d.Resend {
		s.Resend = append(s.Resend, ResendPrompt{Text: p.Text, Line: p.Pos.Line, PromptID: p.ID, UUID: p.UUID, Origin: p.Origin.String()})
	}
	for _, c := range d.Dangling {
		s.DanglingCalls = append(s.DanglingCalls, DanglingCall{ID: c.ID, Name: c.Name, Line: c.Pos.Line, Ran: c.Ran})
	}
	if stamp != nil {
		s.Stamp = &StampJSON{Terminal: string(stamp.Terminal), Code: stamp.Code, StopReason: stamp.StopReason, At: stamp.At}
	}
	return s
}

func vetoesJSON(vs []guards.Veto) []VetoJSON {
	out := []VetoJSON{}
	for _, v := range vs {
		out = append(out, VetoJSON{Guard: v.Guard, Reason: v.Reason})
	}
	return out
}
