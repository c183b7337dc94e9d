package codex

import "github.com/tailproof/tailproof/events"

// The vocabularies of the members whose values are mostly constants:
// AddKnown assigns these strings instead of copying the bytes, and kindOf
// maps them to constant kinds. A value not listed is copied as any other
// string (a newer writer's types decode the same, only not for free).

func knownItem(raw []byte) string {
	switch string(raw) {
	case ItemEventMsg:
		return ItemEventMsg
	case ItemResponseItem:
		return ItemResponseItem
	case ItemTurnContext:
		return ItemTurnContext
	case ItemSessionMeta:
		return ItemSessionMeta
	case ItemCompacted:
		return ItemCompacted
	}
	return ""
}

func knownPayload(raw []byte) string {
	switch string(raw) {
	case "message":
		return "message"
	case "reasoning":
		return "reasoning"
	case "function_call":
		return "function_call"
	case "function_call_output":
		return "function_call_output"
	case "custom_tool_call":
		return "custom_tool_call"
	case "custom_tool_call_output":
		return "custom_tool_call_output"
	case "local_shell_call":
		return "local_shell_call"
	case "web_search_call":
		return "web_search_call"
	case "ghost_snapshot":
		return "ghost_snapshot"
	case "compaction":
		return "compaction"
	case "task_started":
		return "task_started"
	case "task_complete":
		return "task_complete"
	case "turn_aborted":
		return "turn_aborted"
	case "user_message":
		return "user_message"
	case "agent_message":
		return "agent_message"
	case "agent_reasoning":
		return "agent_reasoning"
	case "token_count":
		return "token_count"
	case "exec_command_end":
		return "exec_command_end"
	case "patch_apply_end":
		return "patch_apply_end"
	case "context_compacted":
		return "context_compacted"
	case "error":
		return "error"
	}
	return ""
}

func knownRole(raw []byte) string {
	switch string(raw) {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "developer":
		return "developer"
	case "system":
		return "system"
	}
	return ""
}

func knownPhase(raw []byte) string {
	switch string(raw) {
	case "final_answer":
		return "final_answer"
	case "commentary":
		return "commentary"
	}
	return ""
}

// knownKind is the constant kind of a record of these types, or "" (ADR
// 0018's table lists them): session_meta, compacted and turn_context
// without a payload type, and the response items and events above.
func knownKind(typ, payload string) events.Kind {
	switch typ {
	case ItemResponseItem:
		switch payload {
		case "message":
			return "codex.response_item/message"
		case "reasoning":
			return "codex.response_item/reasoning"
		case "function_call":
			return "codex.response_item/function_call"
		case "function_call_output":
			return "codex.response_item/function_call_output"
		case "custom_tool_call":
			return "codex.response_item/custom_tool_call"
		case "custom_tool_call_output":
			return "codex.response_item/custom_tool_call_output"
		case "local_shell_call":
			return "codex.response_item/local_shell_call"
		case "web_search_call":
			return "codex.response_item/web_search_call"
		case "ghost_snapshot":
			return "codex.response_item/ghost_snapshot"
		case "compaction":
			return "codex.response_item/compaction"
		}
	case ItemEventMsg:
		switch payload {
		case "task_started":
			return "codex.event_msg/task_started"
		case "task_complete":
			return "codex.event_msg/task_complete"
		case "turn_aborted":
			return "codex.event_msg/turn_aborted"
		case "user_message":
			return "codex.event_msg/user_message"
		case "agent_message":
			return "codex.event_msg/agent_message"
		case "agent_reasoning":
			return "codex.event_msg/agent_reasoning"
		case "token_count":
			return "codex.event_msg/token_count"
		case "exec_command_end":
			return "codex.event_msg/exec_command_end"
		case "patch_apply_end":
			return "codex.event_msg/patch_apply_end"
		case "context_compacted":
			return "codex.event_msg/context_compacted"
		case "error":
			return "codex.event_msg/error"
		}
	case ItemSessionMeta:
		if payload == "" {
			return "codex." + ItemSessionMeta
		}
	case ItemCompacted:
		if payload == "" {
			return "codex." + ItemCompacted
		}
	case ItemTurnContext:
		if payload == "" {
			return "codex." + ItemTurnContext
		}
	}
	return ""
}
