package claude

import "github.com/tailproof/tailproof/events"

// The vocabularies of the members whose values are mostly constants:
// objscan's AddKnown and Known assign these strings instead of copying the
// bytes, and kindOf maps the record types to constant kinds. A value not
// listed is read as any other string (a newer version's types decode the
// same, only not for free).

func knownType(raw []byte) string {
	switch string(raw) {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "system":
		return "system"
	case "attachment":
		return "attachment"
	case "summary":
		return "summary"
	case "file-history-snapshot":
		return "file-history-snapshot"
	case "queue-operation":
		return "queue-operation"
	case "progress":
		return "progress"
	}
	return ""
}

func knownSubtype(raw []byte) string {
	switch string(raw) {
	case "turn_duration":
		return "turn_duration"
	case "stop_hook_summary":
		return "stop_hook_summary"
	case "compact_boundary":
		return "compact_boundary"
	case "api_error":
		return "api_error"
	case "local_command":
		return "local_command"
	case "informational":
		return "informational"
	}
	return ""
}

func knownRole(raw []byte) string {
	switch string(raw) {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	}
	return ""
}

func knownStop(raw []byte) string {
	switch string(raw) {
	case "end_turn":
		return "end_turn"
	case "tool_use":
		return "tool_use"
	case "max_tokens":
		return "max_tokens"
	case "stop_sequence":
		return "stop_sequence"
	case "pause_turn":
		return "pause_turn"
	case "refusal":
		return "refusal"
	}
	return ""
}

func knownBlock(raw []byte) string {
	switch string(raw) {
	case "text":
		return "text"
	case "tool_use":
		return "tool_use"
	case "tool_result":
		return "tool_result"
	case "thinking":
		return "thinking"
	case "redacted_thinking":
		return "redacted_thinking"
	case "image":
		return "image"
	case "document":
		return "document"
	case "server_tool_use":
		return "server_tool_use"
	case "web_search_tool_result":
		return "web_search_tool_result"
	}
	return ""
}

// knownKind is the constant kind of a record of these types, or "".
func knownKind(typ, subtype string) events.Kind {
	if subtype == "" {
		switch typ {
		case TypeUser:
			return "claude.user"
		case TypeAssistant:
			return "claude.assistant"
		case TypeSystem:
			return "claude.system"
		case TypeAttachment:
			return "claude.attachment"
		case TypeSummary:
			return "claude.summary"
		case TypeFileHistorySnapshot:
			return "claude.file-history-snapshot"
		case TypeQueueOperation:
			return "claude.queue-operation"
		case TypeProgress:
			return "claude.progress"
		}
		return ""
	}
	if typ != TypeSystem {
		return ""
	}
	switch subtype {
	case "turn_duration":
		return "claude.system/turn_duration"
	case "stop_hook_summary":
		return "claude.system/stop_hook_summary"
	case "compact_boundary":
		return "claude.system/compact_boundary"
	case "api_error":
		return "claude.system/api_error"
	case "local_command":
		return "claude.system/local_command"
	case "informational":
		return "claude.system/informational"
	}
	return ""
}
