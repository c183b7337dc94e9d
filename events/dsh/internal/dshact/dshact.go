// Package dshact holds what mapping dsh events onto the harness-neutral
// vocabulary (events/turn) shares between the two session formats: the
// prompt-source table, the turn-end-reason table and the turn and message
// ids. events/dsh (v1) and events/dsh/v0 decode their own shapes and call
// these, so a table changes in one place (ADR 0018's mapping; the tables
// were checked against dsh-session 0.1.0-rc.8 for v0).
package dshact

import (
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// Prompt makes a an structural prompt act with text, its source from dsh's
// message source kind: user → user, plugin → hook, agent → agent, anything
// else unknown with the kind as the reason.
func Prompt(a *turn.Act, text, sourceKind string) {
	a.Kind, a.Origin, a.Text = turn.KindPrompt, events.OriginStructural, text
	switch sourceKind {
	case "user":
		a.Source = turn.SourceUser
	case "plugin":
		a.Source = turn.SourceHook
	case "agent":
		a.Source = turn.SourceAgent
	default:
		a.Source, a.Reason = turn.SourceUnknown, "source kind "+sourceKind
	}
}

// Reason is a turn/end reason as both formats hold it: its kind, an error's
// message and an abort's reason when they are strings.
type Reason struct {
	Kind               string
	Message, Why       string
	HasMessage, HasWhy bool
}

// End maps a turn/end reason: completed and max-tokens (the model's output
// budget ran out and dsh ended the turn: it ended, not cut) → completed;
// error → failed (its message, else "error"); disposed → cancelled;
// aborted → interrupted ("aborted: " and the reason when there is one);
// interrupted → interrupted; any other kind unstated, the kind as the
// reason. The published format's blocked is v0's own (see its Mapper).
func End(r Reason) (turn.End, string) {
	switch r.Kind {
	case "completed":
		return turn.EndCompleted, ""
	case "max-tokens":
		return turn.EndCompleted, r.Kind
	case "error":
		if r.HasMessage {
			return turn.EndFailed, r.Message
		}
		return turn.EndFailed, r.Kind
	case "disposed":
		return turn.EndCancelled, r.Kind
	case "aborted":
		if r.HasWhy {
			return turn.EndInterrupted, "aborted: " + r.Why
		}
		return turn.EndInterrupted, r.Kind
	case "interrupted":
		return turn.EndInterrupted, r.Kind
	}
	return turn.EndUnstated, r.Kind
}

// MessageID is the id of the assistant message of a turn's step: the
// turn's id, a dot, the step's number (as written).
func MessageID(turnID, step string) string { return turnID + "." + step }
