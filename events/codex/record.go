package codex

import (
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events/internal/objscan"
)

// RolloutItem types (the `type` of a RolloutLine), codex-rs
// protocol/src/protocol.rs `enum RolloutItem` (serde tag "type", content
// "payload", snake_case).
const (
	ItemSessionMeta  = "session_meta"
	ItemResponseItem = "response_item"
	ItemCompacted    = "compacted"
	ItemTurnContext  = "turn_context"
	ItemEventMsg     = "event_msg"
)

// Record is one decoded rollout line. Only what a decision reads is kept:
// identities, turn boundaries, roles and phases, the text of user-role
// input, and session metadata. Tool arguments and outputs, reasoning,
// assistant text and token counts are validated and skipped.
type Record struct {
	Timestamp string
	TimeMs    int64
	// Ordinal is the line's number in paginated history mode (HasOrdinal).
	Ordinal int64

	// Type is the RolloutItem type; Known is false for a type this codec
	// does not model (a newer writer's item: world_state, token_usage_record,
	// inter_agent_communication, …), which decodes without error.
	Type string
	// PayloadType is payload.type for response_item and event_msg.
	PayloadType string

	ID     string // session_meta.id; a response item's id
	TurnID string // turn_id (task_started, task_complete, turn_aborted, turn_context, *_end)
	CallID string
	Name   string
	Role   string // message role
	Phase  string // message / agent_message phase: commentary | final_answer
	Reason string // turn_aborted reason
	Kind   string // user_message kind (older versions): plain | user_instructions | environment_context
	Status string // tool call status
	Text   string // user_message message; the input_text of a user-role message
	// NumTurns is thread_rolled_back.num_turns.
	NumTurns int64

	// Meta is set for session_meta and turn_context records.
	Meta *Meta

	// The flags sit together, so that a Record is 248 bytes, not 272: 32
	// of them fill an 8 KiB slab chunk.
	TimeOK, HasOrdinal, Known, HasText bool
}

// Meta is what session_meta (the session's identity, first one canonical)
// and turn_context (a turn's settings) say.
type Meta struct {
	Cwd, CLIVersion, Originator, Source, ForkedFromID, HistoryMode string
	Model                                                          string
}

// Describe is the record's stable one-line body text.
func (r *Record) Describe() string {
	var b strings.Builder
	b.WriteString(r.Type)
	if r.PayloadType != "" {
		b.WriteByte('/')
		b.WriteString(r.PayloadType)
	}
	kv := func(k, v string) {
		if v != "" {
			b.WriteString(" " + k + "=" + v)
		}
	}
	if r.HasOrdinal {
		kv("ordinal", strconv.FormatInt(r.Ordinal, 10))
	}
	kv("id", r.ID)
	kv("turn", r.TurnID)
	kv("call", r.CallID)
	kv("name", r.Name)
	kv("role", r.Role)
	kv("phase", r.Phase)
	kv("reason", r.Reason)
	kv("kind", r.Kind)
	kv("status", r.Status)
	if m := r.Meta; m != nil {
		kv("cwd", m.Cwd)
		kv("cli", m.CLIVersion)
		kv("source", m.Source)
		kv("history", m.HistoryMode)
		kv("model", m.Model)
	}
	if r.PayloadType == "thread_rolled_back" {
		kv("num_turns", strconv.FormatInt(r.NumTurns, 10))
	}
	if r.HasText {
		b.WriteString(" " + strconv.Quote(objscan.Shorten(r.Text, 40)))
	}
	return b.String()
}
