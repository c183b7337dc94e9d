package claude

import (
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events/internal/objscan"
)

// Record types of Claude Code transcripts. user, assistant, system and
// attachment are the conversation (what the bundled reader keeps when it
// rebuilds a session, issue #2989); the others are bookkeeping.
const (
	TypeUser                = "user"
	TypeAssistant           = "assistant"
	TypeSystem              = "system"
	TypeAttachment          = "attachment"
	TypeSummary             = "summary"
	TypeFileHistorySnapshot = "file-history-snapshot"
	TypeQueueOperation      = "queue-operation"
	TypeProgress            = "progress"
)

// Record is one decoded transcript record. What a decision reads is kept:
// identities and the parent link, provenance fields, the content blocks'
// kinds and ids, the text of user records (what a resume would send) and the
// assistant message's id and stop reason. Assistant text, thinking, tool
// inputs and tool results are validated and skipped.
type Record struct {
	Type, Subtype string
	UUID          string
	// ParentUUID is "" for a root (parentUuid null or absent).
	ParentUUID        string
	LogicalParentUUID string
	SessionID         string
	Timestamp         string
	TimeMs            int64
	TimeOK            bool
	Cwd, Version      string

	IsSidechain, IsMeta, IsCompactSummary, IsAPIErrorMessage bool
	// Provenance of newer 2.1.x versions: promptId, promptSource, origin.kind.
	PromptID, PromptSource, OriginKind string
	// Interrupt sentinels name the cut message and whether a shutdown cut it.
	InterruptedMessageID  string
	InterruptedByShutdown bool
	// PreventedContinuation is a stop_hook_summary's flag; HookErrors and
	// HookContexts count its hookErrors and hookAdditionalContext entries
	// (HasHookErrors: the record has a hookErrors array).
	PreventedContinuation    bool
	HookErrors, HookContexts int
	HasHookErrors            bool
	Operation                string // queue-operation
	LeafUUID                 string // summary
	// Attachment is an attachment record's attachment: its type, and for a
	// queued_command the prompt and its origin kind.
	AttachmentType, AttachmentPrompt, AttachmentOrigin string

	// The message. Content is a string (ContentIsString, Text) or blocks.
	MessageID       string
	Role, Model     string
	StopReason      string
	HasStopReason   bool // a string stop_reason (null and absent are not)
	ContentIsString bool
	Text            string
	Blocks          []Block
}

// Block is one content block.
type Block struct {
	Type string
	// Text is kept for text blocks of user records only.
	Text      string
	ID, Name  string // tool_use
	ToolUseID string // tool_result
	IsError   bool
}

// Describe is the record's stable one-line body text.
func (r *Record) Describe() string {
	var b strings.Builder
	b.WriteString(r.Type)
	if r.Subtype != "" {
		b.WriteString("/" + r.Subtype)
	}
	kv := func(k, v string) {
		if v != "" {
			b.WriteString(" " + k + "=" + v)
		}
	}
	kv("uuid", r.UUID)
	kv("parent", r.ParentUUID)
	kv("logicalParent", r.LogicalParentUUID)
	flag := func(k string, v bool) {
		if v {
			b.WriteString(" " + k)
		}
	}
	flag("sidechain", r.IsSidechain)
	flag("meta", r.IsMeta)
	flag("compactSummary", r.IsCompactSummary)
	flag("apiError", r.IsAPIErrorMessage)
	kv("promptId", r.PromptID)
	kv("promptSource", r.PromptSource)
	kv("origin", r.OriginKind)
	kv("interrupted", r.InterruptedMessageID)
	flag("byShutdown", r.InterruptedByShutdown)
	flag("preventedContinuation", r.PreventedContinuation)
	if r.HasHookErrors {
		b.WriteString(" hookErrors=" + strconv.Itoa(r.HookErrors))
	}
	if r.HookContexts > 0 {
		b.WriteString(" hookContext=" + strconv.Itoa(r.HookContexts))
	}
	kv("op", r.Operation)
	kv("leaf", r.LeafUUID)
	kv("attachment", r.AttachmentType)
	kv("attachmentOrigin", r.AttachmentOrigin)
	if r.AttachmentPrompt != "" {
		b.WriteString(" " + strconv.Quote(objscan.Shorten(r.AttachmentPrompt, 40)))
	}
	kv("msg", r.MessageID)
	if r.Type == TypeAssistant {
		if r.HasStopReason {
			kv("stop", r.StopReason)
		} else {
			b.WriteString(" stop=null")
		}
	}
	if r.ContentIsString {
		b.WriteString(" " + strconv.Quote(objscan.Shorten(r.Text, 40)))
	}
	if len(r.Blocks) > 0 {
		b.WriteString(" [")
		for i, bl := range r.Blocks {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(bl.Type)
			switch {
			case bl.ID != "":
				b.WriteString("(" + bl.ID + " " + bl.Name + ")")
			case bl.ToolUseID != "":
				b.WriteString("(" + bl.ToolUseID)
				if bl.IsError {
					b.WriteString(" error")
				}
				b.WriteString(")")
			case bl.Text != "":
				b.WriteString(" " + strconv.Quote(objscan.Shorten(bl.Text, 40)))
			}
		}
		b.WriteString("]")
	}
	return b.String()
}
