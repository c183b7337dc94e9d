package codex

import (
	"testing"

	"github.com/tailproof/tailproof/events"
)

// TestKnownKind: the constant kinds are the concatenations they stand for,
// and each known vocabulary maps a value to itself.
func TestKnownKind(t *testing.T) {
	items := []string{ItemSessionMeta, ItemResponseItem, ItemCompacted, ItemTurnContext, ItemEventMsg, "world_state", ""}
	payloads := []string{"", "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
		"custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot", "compaction",
		"task_started", "task_complete", "turn_aborted", "user_message", "agent_message", "agent_reasoning",
		"token_count", "exec_command_end", "patch_apply_end", "context_compacted", "error", "thread_rolled_back", "x"}
	for _, it := range items {
		for _, p := range payloads {
			want := events.Kind("codex." + it)
			if p != "" {
				want = events.Kind("codex." + it + "/" + p)
			}
			if got := kindOf(&Record{Type: it, PayloadType: p}); got != want {
				t.Errorf("kindOf(%q, %q) = %q, want %q", it, p, got, want)
			}
			if k := knownPayload([]byte(p)); k != "" && k != p {
				t.Errorf("knownPayload(%q) = %q", p, k)
			}
		}
		if k := knownItem([]byte(it)); k != "" && k != it {
			t.Errorf("knownItem(%q) = %q", it, k)
		}
	}
	for _, v := range []string{"user", "assistant", "developer", "system", "final_answer", "commentary", "other"} {
		if k := knownRole([]byte(v)); k != "" && k != v {
			t.Errorf("knownRole(%q) = %q", v, k)
		}
		if k := knownPhase([]byte(v)); k != "" && k != v {
			t.Errorf("knownPhase(%q) = %q", v, k)
		}
	}
}
