package tailproof

import (
	"encoding/json"

	"github.com/tailproof/tailproof/guards"
)

// SchemaVersion is the version of Result's published JSON shape. It changes
// only when a field changes meaning or goes away; new fields keep it.
const SchemaVersion = 1

// The published shape of a Result: `tailproof reconcile --json`, the lines
// `tailproof serve` prints, the documents the recovery service publishes and
// `tailproof replay`'s decision all marshal through these types, so they
// cannot drift apart.
type resultJSON struct {
	SchemaVersion int            `json:"schemaVersion"`
	SessionID     string         `json:"sessionId"`
	Rules         string         `json:"rules"`
	DryRun        bool           `json:"dryRun"`
	Dangling      []string       `json:"dangling"`
	Decisions     []decisionJSON `json:"decisions"`
}

type decisionJSON struct {
	Target  string        `json:"target"`
	Verdict string        `json:"verdict"`
	Route   string        `json:"route,omitempty"`
	Vetoes  []guards.Veto `json:"vetoes"`
	// Appended is the ledger record appended; WouldAppend the one a dry run
	// would have appended. Each is present only then.
	Appended    json.RawMessage `json:"appended,omitempty"`
	WouldAppend json.RawMessage `json:"wouldAppend,omitempty"`
}

// MarshalJSON writes the one published shape of a reconciliation:
//
//	{"schemaVersion":1,"sessionId":"…","rules":"tailproof","dryRun":false,
//	 "dangling":["p1"],"decisions":[{"target":"p1","verdict":"completed",
//	 "route":"tail-complete","vetoes":[],"appended":{…the ledger record…}}]}
//
// appended is present only when a record was appended, wouldAppend only when
// a dry run would have appended one.
func (r Result) MarshalJSON() ([]byte, error) {
	out := resultJSON{SchemaVersion: SchemaVersion, SessionID: r.SessionID, Rules: r.Rules, DryRun: r.DryRun,
		Dangling: r.Dangling, Decisions: make([]decisionJSON, 0, len(r.Decisions))}
	if out.Dangling == nil {
		out.Dangling = []string{}
	}
	for _, d := range r.Decisions {
		dj := decisionJSON{Target: d.Target, Verdict: string(d.Verdict), Route: string(d.Route), Vetoes: append([]guards.Veto{}, d.Vetoes...)}
		if d.Line != nil {
			if r.DryRun {
				dj.WouldAppend = json.RawMessage(d.Line)
			} else {
				dj.Appended = json.RawMessage(d.Line)
			}
		}
		out.Decisions = append(out.Decisions, dj)
	}
	return json.Marshal(out)
}
