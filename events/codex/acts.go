package codex

import (
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// Harness is Codex rollouts for turn.Read: this codec, this mapper, and
// Codex's framing (a final line without a newline is read if it parses).
func Harness() turn.Harness {
	return turn.Harness{Name: "codex", Codec: Codec{}, Mapper: Mapper{}}
}

// Mapper maps rollout records onto the vocabulary (ADR 0018 has the table).
type Mapper struct{}

// contextualPrefixes open the user-role messages Codex injects into the
// model's context rather than relaying a person's input (codex-rs
// protocol.rs USER_INSTRUCTIONS_OPEN_TAG, ENVIRONMENT_CONTEXT_OPEN_TAG;
// the AGENTS.md, user-shell-command, subagent-notification and skill
// fragments of core's contextual-fragment list).
var contextualPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
	"<user_shell_command>", "<subagent_notification>", "<skill>", "<collaboration_mode>",
}

const turnAbortedTag = "<turn_aborted>"

// Map implements turn.Mapper.
func (Mapper) Map(dst []turn.Act, ev events.Event) []turn.Act {
	r, ok := ev.Body.(*Record)
	if !ok {
		return dst
	}
	a := turn.Act{Pos: ev.Pos, Time: ev.Time, Seq: r.Ordinal, HasSeq: r.HasOrdinal, Native: ev.Kind}
	switch r.Type {
	case ItemSessionMeta:
		a.Kind, a.Reason = turn.KindSession, r.ID
	case ItemTurnContext:
		a.Kind, a.Turn = turn.KindContext, r.TurnID
	case ItemCompacted:
		a.Kind = turn.KindCompaction
	case ItemEventMsg:
		eventAct(&a, r)
	case ItemResponseItem:
		responseAct(&a, r)
	default:
		a.Kind = turn.KindUnknown
	}
	return append(dst, a)
}

func eventAct(a *turn.Act, r *Record) {
	switch r.PayloadType {
	case "task_started", "turn_started":
		a.Kind, a.Turn = turn.KindTurnStart, r.TurnID
	case "task_complete", "turn_complete":
		a.Kind, a.Turn, a.End = turn.KindTurnEnd, r.TurnID, turn.EndCompleted
	case "turn_aborted":
		// TurnAbortReason: interrupted, replaced, review_ended,
		// budget_limited. Each ends the turn before its work was done.
		a.Kind, a.Turn, a.End, a.Reason = turn.KindTurnEnd, r.TurnID, turn.EndInterrupted, r.Reason
	case "user_message":
		a.Kind, a.Text, a.Origin = turn.KindPrompt, r.Text, events.OriginStructural
		switch {
		case r.Kind == "user_instructions" || r.Kind == "environment_context":
			a.Source = turn.SourceInjected
		case r.Kind != "" && r.Kind != "plain":
			a.Source = turn.SourceUnknown
			a.Reason = "user_message kind " + r.Kind
		case contextual(r.Text):
			a.Source, a.Origin = turn.SourceInjected, events.OriginGuessed
		default:
			a.Source = turn.SourceUser
		}
	case "injected_message":
		a.Kind, a.Text, a.Source, a.Origin = turn.KindPrompt, r.Text, turn.SourceInjected, events.OriginStructural
	case "agent_message":
		a.Kind, a.Stop = turn.KindOutput, phaseStop(r.Phase)
	case "agent_reasoning", "agent_reasoning_raw_content":
		a.Kind, a.Stop = turn.KindReasoning, turn.StopContinue
	case "exec_command_end", "patch_apply_end", "mcp_tool_call_end", "dynamic_tool_call_response":
		a.Kind, a.Call, a.Turn = turn.KindToolRan, r.CallID, r.TurnID
	case "context_compacted":
		a.Kind = turn.KindCompaction
	case "thread_rolled_back":
		a.Kind, a.N = turn.KindRollback, r.NumTurns
	case "error":
		a.Kind, a.Reason = turn.KindError, r.Reason
	case "token_count", "thread_name_updated", "thread_goal_updated", "entered_review_mode",
		"exited_review_mode", "undo_completed", "item_completed", "image_generation_end",
		"web_search_end", "sub_agent_activity", "view_image_tool_call", "guardian_assessment",
		"collab_agent_spawn_end", "collab_agent_interaction_end", "collab_waiting_end",
		"collab_close_end", "collab_resume_end", "dynamic_tool_call_request", "warning",
		"collab_tool_call":
		a.Kind = turn.KindNote
	default:
		a.Kind = turn.KindUnknown
	}
}

func responseAct(a *turn.Act, r *Record) {
	switch r.PayloadType {
	case "message":
		switch r.Role {
		case "assistant":
			a.Kind, a.Message, a.Stop = turn.KindOutput, r.ID, phaseStop(r.Phase)
		case "user":
			switch {
			case strings.HasPrefix(strings.TrimSpace(r.Text), turnAbortedTag):
				// The model-visible marker Codex persists after an abort
				// (PR #9043): the turn it follows was interrupted.
				a.Kind, a.Source, a.Origin, a.Reason = turn.KindInterrupt, turn.SourceInjected, events.OriginStructural, "turn_aborted marker"
			case contextual(r.Text):
				a.Kind, a.Source, a.Origin, a.Text = turn.KindPrompt, turn.SourceInjected, events.OriginGuessed, r.Text
			default:
				// The model's copy of a person's input: event_msg/user_message
				// carries it with its provenance, so this copy is not a second
				// prompt (resending both would send it twice).
				a.Kind = turn.KindNote
			}
		default: // developer, system: instructions the harness wrote
			a.Kind, a.Source, a.Origin, a.Text = turn.KindPrompt, turn.SourceInjected, events.OriginStructural, r.Text
		}
	case "agent_message":
		a.Kind, a.Stop = turn.KindOutput, phaseStop(r.Phase)
	case "reasoning":
		a.Kind, a.Stop = turn.KindReasoning, turn.StopContinue
	case "function_call", "custom_tool_call", "local_shell_call", "tool_search_call":
		a.Kind, a.Call, a.Name = turn.KindToolCall, r.CallID, r.Name
		if a.Call == "" {
			a.Call = r.ID // local_shell_call's call_id is optional
		}
	case "function_call_output", "custom_tool_call_output", "tool_search_output":
		a.Kind, a.Call = turn.KindToolResult, r.CallID
	case "web_search_call", "image_generation_call":
		// Run by the model provider inside the response: output, not a call
		// the harness must answer.
		a.Kind, a.Stop = turn.KindOutput, turn.StopContinue
	case "compaction", "context_compaction":
		a.Kind = turn.KindCompaction
	case "ghost_snapshot", "additional_tools", "other":
		a.Kind = turn.KindNote
	default:
		a.Kind = turn.KindUnknown
	}
}

func phaseStop(phase string) turn.Stop {
	switch phase {
	case "final_answer":
		return turn.StopFinal
	case "commentary":
		return turn.StopContinue
	}
	return turn.StopUnclear
}

func contextual(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range contextualPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
