package claude

import (
	"testing"

	"github.com/tailproof/tailproof/events"
)

// TestKnownKind: the constant kinds are the concatenations they stand for,
// and each known vocabulary maps a value to itself.
func TestKnownKind(t *testing.T) {
	types := []string{TypeUser, TypeAssistant, TypeSystem, TypeAttachment, TypeSummary, TypeFileHistorySnapshot,
		TypeQueueOperation, TypeProgress, "permission-mode", ""}
	subtypes := []string{"", "turn_duration", "stop_hook_summary", "compact_boundary", "api_error", "local_command",
		"informational", "other"}
	for _, ty := range types {
		for _, st := range subtypes {
			want := events.Kind("claude." + ty)
			if st != "" {
				want = events.Kind("claude." + ty + "/" + st)
			}
			if got := kindOf(&Record{Type: ty, Subtype: st}); got != want {
				t.Errorf("kindOf(%q, %q) = %q, want %q", ty, st, got, want)
			}
			if k := knownSubtype([]byte(st)); k != "" && k != st {
				t.Errorf("knownSubtype(%q) = %q", st, k)
			}
		}
		if k := knownType([]byte(ty)); k != "" && k != ty {
			t.Errorf("knownType(%q) = %q", ty, k)
		}
	}
	for _, v := range []string{"user", "assistant", "end_turn", "tool_use", "max_tokens", "text", "tool_result",
		"thinking", "image", "x"} {
		for _, f := range []func([]byte) string{knownRole, knownStop, knownBlock} {
			if k := f([]byte(v)); k != "" && k != v {
				t.Errorf("known(%q) = %q", v, k)
			}
		}
	}
}
