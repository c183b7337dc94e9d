package apihistory

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tailproof/tailproof/events/qwen"
)

// Envelope tags the reference keys on. They are facts of the format, not
// configuration: Qwen's background registries wrap every notification's model
// text in the task envelope, and per-turn context in the reminder envelope.
const (
	TaskNotificationOpen  = "<task-notification>"
	TaskNotificationClose = "</task-notification>"
	SystemReminderOpen    = "<system-reminder>"
	SystemReminderClose   = "</system-reminder>"
)

// Todo stop guard prompt text (acpAgent isTodoStopGuardPromptText): the
// guard's synthetic continuation prompts are user entries that are not
// prompts a client submitted, so the last-prompt search skips them.
const (
	todoStopGuardPrefix      = "[Todo Stop Guard] "
	todoStopGuardBodySuffix  = " todo item(s) are still pending or in progress. Continue executing the current task now. Do not ask the user whether to continue. If progress requires user input, use the structured question or permission flow. If progress depends on external state, report the blocker explicitly."
	todoStopGuardFinalSuffix = " This is the final automatic continuation. Before ending, either complete/update the todos or report the completed progress and the exact blocker."
)

// jsTrimEnd is String.prototype.trimEnd: JavaScript's whitespace set is wider
// than ASCII (it includes NBSP, the Zs category, the line separators and the
// BOM), and an envelope followed by any of them still counts as closed.
func jsTrimEnd(s string) string {
	return strings.TrimRightFunc(s, isJSWhitespace)
}

func isJSWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// wrappedIn is the reference's isWrappedIn: a text part (any part whose text
// is a string, thoughts included) that starts with open and, after trimEnd,
// ends with close.
func wrappedIn(p qwen.Part, open, close string) bool {
	return hasText(p) && strings.HasPrefix(p.Text, open) && strings.HasSuffix(jsTrimEnd(p.Text), close)
}

// IsSystemNotificationContent is the reference's shape test: a user entry
// whose parts are all bare task-notification envelopes. Shape alone cannot
// tell a cold notification from a real prompt that looks like one; see
// Entry.ColdNotification for the record-derived signal.
func IsSystemNotificationContent(c qwen.Content) bool {
	if c.Role != "user" || len(c.Parts) == 0 {
		return false
	}
	for _, p := range c.Parts {
		if !wrappedIn(p, TaskNotificationOpen, TaskNotificationClose) {
			return false
		}
	}
	return true
}

// IsSystemReminderContent is environmentContext's isSystemReminderContent:
// every part is a system-reminder envelope. Unlike the notification test it
// is not role-gated.
func IsSystemReminderContent(c qwen.Content) bool {
	if len(c.Parts) == 0 {
		return false
	}
	for _, p := range c.Parts {
		if !wrappedIn(p, SystemReminderOpen, SystemReminderClose) {
			return false
		}
	}
	return true
}

func isTodoStopGuardPromptText(text string) bool {
	rest, ok := strings.CutPrefix(text, todoStopGuardPrefix)
	if !ok {
		return false
	}
	sep := strings.IndexByte(rest, ' ')
	if sep <= 0 {
		return false
	}
	count := rest[:sep]
	// Number(count) must be a positive safe integer whose String() round-trips,
	// which admits exactly canonical decimal digits.
	if count[0] < '1' || count[0] > '9' {
		return false
	}
	for i := 1; i < len(count); i++ {
		if count[i] < '0' || count[i] > '9' {
			return false
		}
	}
	if n, err := strconv.ParseUint(count, 10, 64); err != nil || n > 1<<53-1 {
		return false
	}
	body := count + todoStopGuardBodySuffix
	return rest == body || rest == body+todoStopGuardFinalSuffix
}

// isApiUserPrompt mirrors api-user-prompt.ts isApiUserPrompt with the two
// option sets getLastApiHistoryPromptId uses: tagged entries are tested
// without options; untagged ones exclude todo-stop-guard text. The
// notification exclusion is never on there (the count is always forwarded).
func isApiUserPrompt(c qwen.Content, excludeTodoGuard bool) bool {
	if c.Role != "user" || len(c.Parts) == 0 {
		return false
	}
	for _, p := range c.Parts {
		if p.Kind == qwen.PartFunctionResponse {
			return false
		}
	}
	if IsSystemReminderContent(c) {
		return false
	}
	if excludeTodoGuard {
		for _, p := range c.Parts {
			if hasText(p) && isTodoStopGuardPromptText(p.Text) {
				return false
			}
		}
	}
	for _, p := range c.Parts {
		if hasText(p) && p.Text != "" {
			return true
		}
	}
	return false
}

// isLastPromptCandidate is the findLast predicate of getLastApiHistoryPromptId.
func isLastPromptCandidate(c qwen.Content, tagged bool) bool {
	if isApiUserPrompt(c, !tagged) {
		return true
	}
	if c.Role != "user" {
		return false
	}
	media := false
	for _, p := range c.Parts {
		switch p.Kind {
		case qwen.PartFunctionResponse:
			return false
		case qwen.PartInlineData, qwen.PartFileData:
			media = true
		}
	}
	return media
}

// onlyText is the slash-command pop's part test: a string text and no other
// key (Object.keys(part).length === 1).
func onlyText(p qwen.Part) bool { return hasText(p) && p.OnlyText }

// hasText is typeof part.text === "string", whatever else the part holds
// (the codec sets HasText; hand-built text parts may only set Kind).
func hasText(p qwen.Part) bool { return p.HasText || p.Kind == qwen.PartText }

// jsonNumber parses raw JSON text as a finite number (JSON.parse of a
// number literal; an out-of-range literal becomes ±Infinity there, which no
// check here accepts).
func jsonNumber(raw string) (float64, bool) {
	if raw == "" || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// jsonInteger is Number.isInteger over a JSON value's text.
func jsonInteger(raw string) (float64, bool) {
	f, ok := jsonNumber(raw)
	if !ok || math.Trunc(f) != f {
		return 0, false
	}
	return f, true
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
