// Package bustest builds Qwen sessions for bus and transport tests: a ledger
// with one prompt left in_flight and a transcript that proves it completed.
package bustest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/bus"

	"github.com/tailproof/tailproof/events/ledger"
)

// BaseMs is 2026-01-01T00:00:00Z in Unix milliseconds.
const BaseMs = 1767225600000

// SessionID returns the i-th test session id (a UUID-shaped id Qwen's scan
// accepts).
func SessionID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// InFlightLedger is a ledger holding prompt's in_flight admission only.
func InFlightLedger(prompt string) []byte {
	return append(ledger.Encode(ledger.InFlight(prompt, BaseMs+500, "")), '\n')
}

// CompletedTranscript is a transcript of turns user/assistant exchanges whose
// last turn ended with a model answer: a crash after it decides completed.
// Its records say they were written in workspace "/w".
func CompletedTranscript(turns int) []byte { return CompletedTranscriptIn("/w", turns) }

// CompletedTranscriptIn is CompletedTranscript written in workspace cwd.
func CompletedTranscriptIn(cwd string, turns int) []byte {
	var b strings.Builder
	parent := "null"
	for i := range turns {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		fmt.Fprintf(&b, `{"uuid":%q,"parentUuid":%s,"sessionId":"S","timestamp":"%s","type":"user","provenance":"real_user","cwd":%q,"version":"1","message":{"role":"user","parts":[{"text":"question %d"}]}}`+"\n",
			u, parent, stamp(2*i+1), cwd, i)
		fmt.Fprintf(&b, `{"uuid":%q,"parentUuid":%q,"sessionId":"S","timestamp":"%s","type":"assistant","provenance":"assistant_output","cwd":%q,"version":"1","message":{"role":"model","parts":[{"text":"answer %d"}]}}`+"\n",
			a, u, stamp(2*i+2), cwd, i)
		parent = fmt.Sprintf("%q", a)
	}
	return []byte(b.String())
}

func stamp(sec int) string {
	return fmt.Sprintf("2026-01-01T%02d:%02d:%02d.000Z", sec/3600, sec/60%60, sec%60)
}

// Seeder is the part of a Qwen store that writes fixtures.
type Seeder interface {
	SeedLedger(ctx context.Context, sessionID string, data []byte) error
	SeedTranscript(ctx context.Context, sessionID string, data []byte) error
}

// Seed writes a session whose prompt "p-<sessionID>" is in_flight and whose
// transcript proves it completed, written in the store's workspace when the
// store knows one.
func Seed(ctx context.Context, s Seeder, sessionID string, turns int) error {
	if err := s.SeedLedger(ctx, sessionID, InFlightLedger(Prompt(sessionID))); err != nil {
		return err
	}
	cwd := "/w"
	if ws, ok := s.(adapters.WorkspaceStore); ok && ws.Workspace() != "" {
		cwd = ws.Workspace()
	}
	return s.SeedTranscript(ctx, sessionID, CompletedTranscriptIn(cwd, turns))
}

// Prompt is the in_flight prompt Seed writes for sessionID.
func Prompt(sessionID string) string { return "p-" + sessionID }

// Doc is a published decision document as a consumer reads it (the shape
// tailproof.Result marshals to), reduced to what the tests check.
type Doc struct {
	SchemaVersion int    `json:"schemaVersion"`
	SessionID     string `json:"sessionId"`
	DryRun        bool   `json:"dryRun"`
	Decisions     []struct {
		Target      string          `json:"target"`
		Verdict     string          `json:"verdict"`
		Appended    json.RawMessage `json:"appended"`
		WouldAppend json.RawMessage `json:"wouldAppend"`
		Vetoes      []struct {
			Guard, Reason string
		} `json:"vetoes"`
	} `json:"decisions"`
}

// ParseDoc parses a decision document.
func ParseDoc(b []byte) (Doc, error) {
	var d Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("bustest: decision document %q: %w", b, err)
	}
	return d, nil
}

// Verdict is the document's one-prompt summary: "none" when nothing
// dangled, else the first decision's target and verdict and the record it
// appended ("" when none).
func (d Doc) Verdict() (target, verdict, appended string) {
	if len(d.Decisions) == 0 {
		return "", "none", ""
	}
	x := d.Decisions[0]
	return x.Target, x.Verdict, string(x.Appended)
}

// FakeDecision is a decision document with one verdict and nothing
// appended, for tests of the transport that need no real decision.
func FakeDecision(session, verdict string) bus.Decision {
	doc, _ := json.Marshal(map[string]any{"schemaVersion": 1, "sessionId": session,
		"decisions": []map[string]any{{"target": "p", "verdict": verdict, "vetoes": []any{}}}})
	return bus.Decision{Document: doc}
}
