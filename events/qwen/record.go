package qwen

import (
	"strconv"
	"strings"
)

// Record types written by Qwen Code's ChatRecordingService.
const (
	TypeUser       = "user"
	TypeAssistant  = "assistant"
	TypeToolResult = "tool_result"
	TypeSystem     = "system"
)

// Subtypes the projections give meaning to. Every other subtype (see
// KnownSubtypes) decodes as a generic record with its payload left raw.
const (
	SubtypeChatCompression    = "chat_compression"
	SubtypeSlashCommand       = "slash_command"
	SubtypeNotification       = "notification"
	SubtypeCron               = "cron"
	SubtypeMidTurnUserMessage = "mid_turn_user_message"
	SubtypeCustomTitle        = "custom_title"
	SubtypeGoalTurnEnd        = "goal_turn_end"
	SubtypeGoalRuntime        = "goal_runtime"
	SubtypeRealtimeMessage    = "realtime_message"
	SubtypeTurnResult         = "turn_result"
	SubtypeTurnAttempt        = "turn_attempt"
	SubtypeCodeModeToolResult = "code_mode_tool_result"
	SubtypeUITelemetry        = "ui_telemetry"
	// SubtypeBackgroundTaskCompleted is recordBackgroundTaskCompleted's
	// record (Qwen Code 0.24.4): written when a finished background task's
	// result is queued, before the notification turn that answers it. It is
	// never stamped backgroundTurn (the writer deletes the stamp).
	SubtypeBackgroundTaskCompleted = "background_task_completed"
	// SubtypeBranchCheckpoint is recordBranchCheckpointTransaction's record
	// (0.24.4): written only for a turn that ended with stopReason end_turn.
	SubtypeBranchCheckpoint = "branch_checkpoint"
	// SubtypeFileHistorySnapshot is the ACP prompt path's file checkpoint
	// (0.24.4: written right after the prompt's user record; its snapshot
	// names the turn's internal prompt id).
	SubtypeFileHistorySnapshot = "file_history_snapshot"
)

// Version0244 is the `version` createBaseRecord writes for Qwen Code 0.24.4
// (getCliVersion()).
const Version0244 = "0.24.4"

// KnownSubtypes is the ChatRecord subtype union of Qwen Code (chatRecordingService.ts
// @015346f1) plus turn_attempt and code_mode_tool_result, which the api-history
// accumulator matches by name. Qwen 0.24.4's validator knows a narrower set
// (no session_notes, session_execution_engine, session_approval_mode,
// user_text_elements, turn_attempt, code_mode_tool_result); records with
// those subtypes are kept with an unknown_record_or_part diagnostic.
var KnownSubtypes = []string{
	"session_notes", "chat_compression", "slash_command", "ui_telemetry", "at_command",
	"attribution_snapshot", "notification", "background_task_completed", "cron",
	"mid_turn_user_message", "custom_title", "parent_session", "session_source",
	"session_execution_engine", "omni_recall", "session_model", "session_approval_mode", "rewind",
	"agent_bootstrap", "agent_launch_prompt", "agent_retry", "agent_session_ready",
	"file_history_snapshot", "user_text_elements", "session_artifact_event",
	"session_artifact_snapshot", "session_sources_snapshot", "branch_checkpoint", "goal_state",
	"goal_runtime", "goal_turn_end", "realtime_message", "turn_result", "managed_session_header_v1",
	"managed_session_event_v1", "managed_session_commit_v1", "turn_attempt", "code_mode_tool_result",
}

// Record is one decoded ChatRecord. Only the fields a decision can use are
// materialized; large bodies (tool outputs, function arguments) are not kept
// unless DecodeOptions.KeepPayloads asks for them.
type Record struct {
	UUID       string
	ParentUUID string // "" for a root (parentUuid null or "")
	// ParentNull is true when parentUuid was JSON null. Both null and ""
	// make a root, but fragments with null and "" disagree on their parent
	// (JavaScript null !== "").
	ParentNull bool
	SessionID  string
	Timestamp  string // as written (ISO 8601), when a string
	TimeMs     int64  // Date.parse(Timestamp)
	// TimeOK is false when the timestamp is absent, not a string or not a
	// valid date; Qwen's validator then treats it as absent.
	TimeOK  bool
	Type    string
	Subtype string
	// HasSubtype is true when the record carries a string subtype (JS
	// `typeof record.subtype === "string"`); a non-string subtype is dropped
	// by Qwen's validator, exactly as if it were absent.
	HasSubtype bool
	// Cwd is the writer's working directory ("" when absent or not a
	// string); Qwen checks the first record's cwd for project membership.
	Cwd string
	// Provenance is the raw `provenance` field; "" when absent (legacy).
	Provenance string
	Message    *Content // nil when the record has no message
	// PromptID is the record's own promptId field. Qwen Code 0.24.4's
	// ChatRecordingService never writes it (newer source does, on prompts).
	PromptID string
	// DaemonPromptID is recordUserMessage's daemonPromptId (0.24.4): the
	// daemon's admission identity, on the user record of a prompt the
	// daemon dispatched; "" when absent or blank.
	DaemonPromptID string
	GoalContext    *GoalContext
	// DeliveredTurn is deliveredTurn: true. Qwen Code 0.24.4 never writes
	// it (no file of the published package contains the string); newer
	// source writes it on the notification that is a delivered turn's user
	// entry. Decoded for those writers, and read only as a fallback.
	DeliveredTurn bool
	// HasBackground is true when the record carries a backgroundTurn
	// object: Qwen Code 0.24.4's createBaseRecord stamps it on every record
	// created inside a background notification turn. BackgroundTurn holds
	// its fields.
	HasBackground  bool
	BackgroundTurn *BackgroundTurn
	// Version is the writer's `version` (createBaseRecord: getCliVersion()),
	// "" when absent or not a string.
	Version string
	// HasUsage: the record carries a usageMetadata object (0.24.4's
	// recordAssistantTurn writes it for a model call whose stream completed;
	// an aborted call's partial record has none).
	HasUsage bool
	// ToolStatus and ToolExecStatus are a tool_result's
	// toolCallResult.status and .executionStatus ("" when absent or not a
	// string). Qwen Code 0.24.4 records a call the permission step
	// cancelled with status "cancelled" and executionStatus "not_started"
	// (earlyErrorResponse, acpAgent-GQCJ4KZY.js), after which the turn ends
	// (stopAfterPermissionCancel).
	ToolStatus, ToolExecStatus string
	// Telemetry is a ui_telemetry record's uiEvent (nil for other records).
	Telemetry *Telemetry
	// SnapshotPromptID is a file_history_snapshot's last snapshot's
	// promptId: the internal id of the turn that made it ("" when none).
	SnapshotPromptID string

	// Typed system payloads, set for the matching subtype.
	Compression  *Compression
	SlashCommand *SlashCommand
	GoalTurnEnd  *GoalTurnEnd
	TurnResult   *TurnResult
	CustomTitle  *CustomTitle
	// Notification is the systemPayload of notification, cron and
	// background_task_completed records.
	Notification     *Notification
	BranchCheckpoint *BranchCheckpoint
}

// BackgroundTurn is the backgroundTurn stamp: the identity of the
// background notification turn a record was written in, as 0.24.4's ACP
// agent builds it ({turnId: "<sessionId>########notification<uuid>", taskId,
// kind, toolUseId?, sourceTurnId?, label?, startedAt}). A field that is not
// a string is "".
type BackgroundTurn struct {
	TurnID, TaskID, Kind, ToolUseID, SourceTurnID, Label string
	// StartedAt is the JSON value as text (Date.now() in milliseconds).
	StartedAt string
}

// Telemetry is the part of a ui_telemetry record's uiEvent that names the
// call's turn: recordUiTelemetryEvent (0.24.4, chunk-2VS5EEXU.js
// logApiResponse / logApiError / logToolCall) writes `event.name`
// ("qwen-code.api_response", "qwen-code.api_error", "qwen-code.tool_call",
// ...) and `prompt_id`, the id the turn sent the model with.
type Telemetry struct {
	EventName, PromptID string
}

// BranchCheckpoint is a branch_checkpoint payload ({v: 1,
// startExclusiveRecordUuid, assistantRecordUuid}).
type BranchCheckpoint struct {
	StartExclusiveRecordUUID string
	AssistantRecordUUID      string
}

// GoalContext binds a record to a goal turn.
type GoalContext struct {
	GoalID   string
	Revision string // the JSON value as text, so 1 and "1" stay distinct
	TurnID   string
	// HasGoalID/HasTurnID: the field is a string (JS `typeof === "string"`).
	HasGoalID bool
	HasTurnID bool
	// RevisionComparable is false when revision is absent, an object or an
	// array: JavaScript's === never holds for those (objects compare by
	// identity; undefined only equals undefined, which Equal treats as no
	// binding), so two such contexts are never the same goal turn.
	RevisionComparable bool
	// RevisionIsInteger mirrors Number.isInteger(revision), which the
	// goal_turn_end rule requires of the permit.
	RevisionIsInteger bool
}

// Equal mirrors the reference's strict comparison of goalId, revision and
// turnId. Numbers are compared by value (1 and 1.0 are the same revision),
// strings by content, and an object or array revision equals nothing.
func (g *GoalContext) Equal(o *GoalContext) bool {
	return g != nil && o != nil && g.RevisionComparable && o.RevisionComparable && *g == *o
}

// Content is a Gemini Content value.
type Content struct {
	Role  string
	Parts []Part
}

// PartKind says which Part shape this is.
type PartKind uint8

const (
	PartOther PartKind = iota // a shape this codec does not model; kept raw with KeepPayloads
	PartText
	PartFunctionCall
	PartFunctionResponse
	PartInlineData
	PartFileData
)

func (k PartKind) String() string {
	switch k {
	case PartText:
		return "text"
	case PartFunctionCall:
		return "functionCall"
	case PartFunctionResponse:
		return "functionResponse"
	case PartInlineData:
		return "inlineData"
	case PartFileData:
		return "fileData"
	}
	return "other"
}

// Part is one message part.
type Part struct {
	Kind    PartKind
	Text    string // text parts (and thoughts)
	Thought bool
	// Function call / response identity. HasID distinguishes an absent id
	// from an empty one; HasName likewise.
	ID      string
	HasID   bool
	Name    string
	HasName bool
	// HasText is true when the part has a string `text` (whatever its Kind).
	HasText bool
	// OnlyText is true when the part object has exactly one key and it is
	// "text" (JS `Object.keys(part).length === 1 && "text" in part`);
	// the slash-command pop rule needs it.
	OnlyText bool
	// Raw is the part's JSON, kept only with DecodeOptions.KeepPayloads (a
	// continuation must resend parts byte for byte).
	Raw []byte
}

// Compression is a chat_compression payload.
type Compression struct {
	// HasHistory is true when compressedHistory is truthy (present, not
	// null): only then does the record reset the api history.
	HasHistory           bool
	History              []Content
	CompletedToolCallIDs []string
}

// SlashCommand is a slash_command payload.
type SlashCommand struct {
	Phase             string
	RawCommand        string
	SentToModel       bool
	OutputItemTypes   []string // the `type` of each outputHistoryItems entry ("" when absent)
	HasOutputItems    bool
	HiddenInvocation  bool
	OutputItemsLength int
}

// GoalTurnEnd is a goal_turn_end payload.
type GoalTurnEnd struct{ ToolCallID string }

// TurnResult is a turn_result payload: the settled outcome of one admitted prompt.
//
// Qwen Code 0.24.4 writes it at settle for every prompt the daemon
// dispatched (#settleTurnRecording): promptId is the daemon's prompt id,
// state, stopReason?, error? ({message, code?, ...} for state error),
// startedAt?, cancelledAt?, endedAt, promptText, and result fields. A
// background turn writes none.
type TurnResult struct {
	PromptID       string
	State          string // completed | cancelled | error
	StopReason     string
	CancelledAt    string // the JSON value as text; "" when absent
	HasCancelledAt bool
	StartedAt      string // the JSON value as text; "" when absent
	EndedAt        string
	// HasError is true when error is an object; ErrorMessage and ErrorCode
	// are its message and code when those are strings.
	HasError                bool
	ErrorMessage, ErrorCode string
}

// CustomTitle is a custom_title payload.
type CustomTitle struct {
	Title  string
	Source string
}

// Notification is the systemPayload of a notification, cron or
// background_task_completed record: {displayText, backgroundTask?: {taskId,
// sourceTurnId?, status, kind, toolUseId?, ...}}.
type Notification struct {
	DisplayText  string
	TaskID       string
	TaskStatus   string
	TaskKind     string
	SourceTurnID string
	ToolUseID    string
}

// Describe is the record's stable one-line body text, e.g.
//
//	user "hello" | assistant fc(call-1 read_file) | system/chat_compression reset
func (r *Record) Describe() string {
	var b strings.Builder
	b.WriteString(r.Type)
	if r.Subtype != "" {
		b.WriteByte('/')
		b.WriteString(r.Subtype)
	}
	if r.PromptID != "" {
		b.WriteString(" promptId=" + r.PromptID)
	}
	if r.DaemonPromptID != "" {
		b.WriteString(" daemonPromptId=" + r.DaemonPromptID)
	}
	if r.BackgroundTurn != nil {
		b.WriteString(" backgroundTurn=" + r.BackgroundTurn.TurnID)
	}
	if r.Message != nil {
		b.WriteByte(' ')
		b.WriteString(r.Message.Describe())
	}
	switch {
	case r.Compression != nil:
		if r.Compression.HasHistory {
			b.WriteString(" reset(" + strconv.Itoa(len(r.Compression.History)) + ")")
		} else {
			b.WriteString(" no-reset")
		}
	case r.SlashCommand != nil:
		b.WriteString(" " + r.SlashCommand.Phase + " " + strconv.Quote(r.SlashCommand.RawCommand))
	case r.GoalTurnEnd != nil:
		b.WriteString(" toolCallId=" + r.GoalTurnEnd.ToolCallID)
	case r.TurnResult != nil:
		b.WriteString(" " + r.TurnResult.PromptID + " " + r.TurnResult.State)
		if r.TurnResult.HasCancelledAt {
			b.WriteString(" cancelledAt")
		}
	case r.CustomTitle != nil:
		b.WriteString(" " + strconv.Quote(r.CustomTitle.Title))
	}
	return b.String()
}

// Describe prints a content value as role[part, part…].
func (c *Content) Describe() string {
	var b strings.Builder
	b.WriteString(c.Role)
	b.WriteByte('[')
	for i, p := range c.Parts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Describe())
	}
	b.WriteByte(']')
	return b.String()
}

// Describe prints one part compactly; long text is shortened.
func (p Part) Describe() string {
	switch p.Kind {
	case PartText:
		s := strconv.Quote(shorten(p.Text, 48))
		if p.Thought {
			return "thought:" + s
		}
		return s
	case PartFunctionCall:
		return "fc(" + idOr(p) + " " + p.Name + ")"
	case PartFunctionResponse:
		return "fr(" + idOr(p) + " " + p.Name + ")"
	}
	return p.Kind.String()
}

func idOr(p Part) string {
	if !p.HasID {
		return "-"
	}
	return p.ID
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
