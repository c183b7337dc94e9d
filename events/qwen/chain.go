package qwen

import (
	"errors"
	"fmt"
	"io"

	"github.com/tailproof/tailproof/events"
)

// Opener opens the transcript from its first byte. LoadChain, Scan and Walk
// call it once per pass.
type Opener = func() (io.ReadCloser, error)

// Diagnostic codes. The first eight are Qwen's own (transcript record
// preparation, Qwen Code 0.24.4); uuid_hash_collision is tailproof's.
const (
	DiagInvalidRecord       = "invalid_record"
	DiagUnknownRecordOrPart = "unknown_record_or_part"
	DiagInvalidTimestamp    = "invalid_timestamp"
	DiagMalformedPart       = "malformed_part"
	DiagArtifactOnly        = "artifact_only"
	DiagConflictingParent   = "conflicting_parent_uuid"
	DiagHistoryGap          = "history_gap"
	DiagParentCycle         = "parent_cycle"
	// DiagHashCollision: two different uuids share a 64-bit index hash, so
	// the chain built in pass 1 cannot be trusted. It is found when the
	// records sharing the hash are read back, or by Walk, which stops; the
	// chain is degraded.
	DiagHashCollision = "uuid_hash_collision"
)

var (
	// ErrMixedSessionIDs: the transcript's valid records carry more than
	// one sessionId. Qwen's loader throws (mixed_session_ids).
	ErrMixedSessionIDs = errors.New("transcript records contain multiple session ids")
	// ErrHashCollision: pass 2 found that the uuid index of pass 1 merged
	// two different uuids. Fail closed: the chain is not what Qwen builds.
	ErrHashCollision = errors.New("uuid hash collision")
	// ErrChanged: pass 2 did not find what pass 1 indexed; the file was
	// rewritten (not merely appended to) between the passes.
	ErrChanged = errors.New("transcript changed between passes")
)

// Diagnostic is one finding of record preparation, in Qwen's vocabulary.
type Diagnostic struct {
	Code    string
	Message string
	// AffectsCompleteness is Qwen's own flag for the code.
	AffectsCompleteness bool
	// RecordIndex is the index of the JSON object among all objects read
	// (Qwen's recordIndex); -1 when the finding is not about one object.
	RecordIndex int
	RecordID    string
	Path        string
	Pos         events.Position // where the object starts; zero when not about one object
}

func (d Diagnostic) String() string {
	s := d.Code
	if d.RecordIndex >= 0 {
		s += fmt.Sprintf(" #%d", d.RecordIndex)
	}
	if d.RecordID != "" {
		s += " id=" + d.RecordID
	}
	if d.Path != "" {
		s += " path=" + d.Path
	}
	if d.Pos.Line > 0 {
		s += " (" + d.Pos.String() + ")"
	}
	return s
}

// Gap is a break in the active chain: ChildUUID's parent is not a
// conversation record of the transcript. Records before the gap are not
// reconnected (they may be turns the user rewound away).
type Gap struct {
	ChildUUID         string
	MissingParentUUID string
}

// LoadOptions tune LoadChain and Scan.
type LoadOptions struct {
	Decode DecodeOptions
	// MaxLineBytes bounds one physical line (<= 0: events.DefaultMaxLineBytes).
	// A longer line is refused: reading stops there with an *events.Error
	// of kind events.ErrLineTooLong at the line's position, after at most
	// MaxLineBytes+1 bytes of it (Qwen has no limit, but a transcript that
	// never ends a line must not be read forever).
	MaxLineBytes int
}

// Chain is the active conversation of a transcript, as Qwen's
// SessionService.loadSession builds conversation.messages: every line read
// with parseLineTolerant, records validated, the leaf is the last
// conversation record, the chain is walked back through parentUuid from it,
// and records sharing a uuid are aggregated into one.
//
// LoadChain keeps only a compact index (index.go); the records themselves
// are read again by Walk. Scan hands them over as it indexes while the
// transcript is one linear chain.
type Chain struct {
	// Len is the number of records on the active chain.
	Len int
	// LeafUUID is the uuid of the last conversation record ("" when none).
	LeafUUID string
	// SessionID is the sessionId every valid record carries.
	SessionID string
	// Objects counts the JSON objects read; Records those that passed
	// validation.
	Objects, Records int
	// First* come from the first JSON object of the file, valid or not:
	// Qwen checks project membership on it (sessionBelongsToCurrentProject).
	HasFirst                          bool
	FirstSessionID, FirstCwd, FirstTS string

	Gaps []Gap
	// Cycle is the uuid at which the walk met itself ("" when none).
	Cycle string
	// Diagnostics in Qwen's order: per-record validation findings in file
	// order, then conflicting parents, gaps and the cycle; a hash collision
	// found by Walk is appended.
	Diagnostics []Diagnostic
	// BadLines are lines Qwen's reader would not read completely, in file
	// order, classified as events.ErrTornTail (nothing readable after) or
	// events.ErrCorrupt (readable records follow).
	BadLines []*events.Error
	// Streaming is true when Walk can emit records as it reads them (chain
	// order is file order and no uuid has fragments), with memory independent
	// of the transcript's size. Otherwise Walk emits a record once it and
	// every record before it on the chain have all their fragments, holding
	// (decoded, without payloads unless KeepPayloads) only the records read
	// ahead of their turn.
	Streaming bool

	opts LoadOptions
	// What Walk emits. When Streaming, onChain has a bit per object index,
	// set for the chain's records (their chain positions are their order).
	// Otherwise want lists the objects, sorted by object index, with the
	// chain position each belongs to, and multi the number of objects of
	// each position that has more than one (fragments).
	onChain []uint64
	want    []want
	multi   map[uint32]uint32
}

type want struct{ ord, pos uint32 }

// Degraded says why the chain may differ from the conversation the session
// really had, or "" when nothing suggests it: a gap, a cycle, fragments
// disagreeing on their parent, a hash collision, a skipped (invalid) record,
// or a corrupt line. A torn tail alone is not degradation — it
// is the expected trace of a crash mid-append, and Qwen drops it the same
// way. Unknown subtypes, invalid timestamps and malformed message payloads
// are reported in Diagnostics but do not degrade the chain: Qwen keeps those
// records.
func (c *Chain) Degraded() string {
	if len(c.Gaps) > 0 {
		return fmt.Sprintf("history gap: %s's parent %s is missing", c.Gaps[0].ChildUUID, c.Gaps[0].MissingParentUUID)
	}
	if c.Cycle != "" {
		return "parent cycle at " + c.Cycle
	}
	for _, d := range c.Diagnostics {
		switch d.Code {
		case DiagConflictingParent, DiagHashCollision, DiagInvalidRecord:
			return d.Code + ": " + d.String()
		case DiagUnknownRecordOrPart:
			if d.Path == "" { // unknown record type: the record was skipped
				return "skipped record of unknown type: " + d.String()
			}
		}
	}
	for _, e := range c.BadLines {
		if !errors.Is(e, events.ErrTornTail) {
			return e.Error()
		}
	}
	return ""
}

// IsConversationRecord is Qwen's isTranscriptConversationRecord: every
// record except system artifact, sources-snapshot and managed-session
// records. Only conversation records can be the leaf or be on the chain.
func IsConversationRecord(r *Record) bool { return isConversation(r) }

func isConversation(r *Record) bool {
	return r.Type != TypeSystem || !r.HasSubtype || conversationSubtype(r.Subtype)
}

// isConversationID is isConversation of a record's identity.
func isConversationID(pr *parsed) bool {
	return string(pr.id.typ) != TypeSystem || pr.subtype != jString || conversationSubtype(string(pr.id.subtype))
}

func conversationSubtype(s string) bool {
	switch s {
	case "session_artifact_event", "session_artifact_snapshot", // artifact records
		"session_sources_snapshot", "managed_session_header_v1",
		"managed_session_event_v1", "managed_session_commit_v1":
		return false
	}
	return true
}

// knownSubtype is Qwen 0.24.4's KNOWN_RECORD_SUBTYPES (validation), which is
// narrower than the ChatRecord type union (KnownSubtypes).
func knownSubtype(s string) bool {
	switch s {
	case "chat_compression", "slash_command", "ui_telemetry", "at_command", "attribution_snapshot",
		"notification", "background_task_completed", "cron", "mid_turn_user_message", "realtime_message",
		"custom_title", "parent_session", "rewind", "agent_bootstrap", "agent_launch_prompt", "agent_retry",
		"agent_session_ready", "file_history_snapshot", "session_source", "session_model", "omni_recall",
		"session_sources_snapshot", "branch_checkpoint", "goal_state", "goal_runtime", "goal_turn_end",
		"turn_result", "session_artifact_event", "session_artifact_snapshot", "managed_session_header_v1",
		"managed_session_event_v1", "managed_session_commit_v1":
		return true
	}
	return false
}

// recordDiagnostics is the non-skipping half of validateTranscriptRecord.
func recordDiagnostics(pr *parsed, idx int, pos events.Position, dst []Diagnostic) []Diagnostic {
	id := &pr.id
	d := func(code, msg string, affects bool, path string) {
		dst = append(dst, Diagnostic{Code: code, Message: msg, AffectsCompleteness: affects,
			RecordIndex: idx, RecordID: string(id.uuid), Path: path, Pos: pos})
	}
	if pr.timestamp != jAbsent && (pr.timestamp != jString || !id.timeOK) {
		d(DiagInvalidTimestamp, "Ignored an invalid transcript record timestamp.", false, "timestamp")
	}
	if pr.subtype != jAbsent && (pr.subtype != jString || !knownSubtype(string(id.subtype))) {
		d(DiagUnknownRecordOrPart, "The transcript record has an unknown subtype.", true, "subtype")
	}
	if pr.message != jAbsent {
		if pr.message != jObject {
			d(DiagMalformedPart, "Ignored a malformed transcript message payload.", true, "message")
		} else if pr.parts != jAbsent && pr.parts != jArray {
			d(DiagMalformedPart, "Ignored malformed transcript message parts.", true, "message.parts")
		}
	}
	return dst
}
