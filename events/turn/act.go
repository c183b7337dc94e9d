package turn

import (
	"strconv"
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/internal/objscan"
)

// Kind is what a record does, whatever harness wrote it.
type Kind uint8

const (
	KindNone Kind = iota
	// KindSession names the session (Codex session_meta). No turn evidence.
	KindSession
	// KindContext is per-turn configuration (Codex turn_context): cwd, model,
	// policies. It neither starts nor advances a turn.
	KindContext
	// KindPrompt is input put before the model. Source says whose it is; only
	// SourceUser input is ever resent.
	KindPrompt
	// KindTurnStart is the harness opening a turn explicitly (Codex
	// task_started). Harnesses without one open turns implicitly, by a prompt.
	KindTurnStart
	// KindTurnEnd is the harness closing a turn; End says how.
	KindTurnEnd
	// KindOutput is model output that reached the transcript. Message groups
	// the records of one message written over several lines; Stop says
	// whether the message is complete and whether the model meant to go on.
	KindOutput
	// KindReasoning is model reasoning (thinking blocks, reasoning items).
	KindReasoning
	// KindToolCall is the model asking for a tool call, identified by Call.
	KindToolCall
	// KindToolResult is the result of call Call reaching the model's context.
	KindToolResult
	// KindToolRan is proof that call Call's side effect happened (Codex
	// exec_command_end), independent of whether its result was recorded.
	KindToolRan
	// KindInterrupt is an interrupt marker inside a turn (Claude Code's
	// "[Request interrupted by user]", Codex's <turn_aborted> message).
	KindInterrupt
	// KindCompaction is context compaction: earlier history was replaced.
	KindCompaction
	// KindError is an error the harness recorded; Retry says whether the
	// harness was about to retry (a notice) rather than give up.
	KindError
	// KindRollback undoes the last N turns (Codex thread_rolled_back).
	KindRollback
	// KindNote is a record the codec knows that says nothing about turns
	// (token counts, titles, file snapshots, hook summaries).
	KindNote
	// KindUnknown is a record type the codec does not know: harnesses add
	// types often, so it is carried, reported and otherwise ignored.
	KindUnknown
	// KindDamage is bytes that did not decode. Damage holds the positioned
	// *events.Error, classified torn tail, corrupt or too long.
	KindDamage
	// KindTurnMark names, in Turn, the turn the record was written in,
	// without opening or ending it (Qwen Code's ui_telemetry prompt_id,
	// backgroundTurn stamp and file_history_snapshot promptId). A mark that
	// names another turn than the open turn's earlier marks is the writer
	// moving to another turn that wrote no opener (a Qwen cron turn after a
	// restart): the fold closes the open turn there. Marks live in their own
	// name space, apart from the turn ids of starts and ends.
	KindTurnMark
)

var kindNames = [...]string{
	KindNone: "none", KindSession: "session", KindContext: "context", KindPrompt: "prompt",
	KindTurnStart: "turn-start", KindTurnEnd: "turn-end", KindOutput: "output",
	KindReasoning: "reasoning", KindToolCall: "tool-call", KindToolResult: "tool-result",
	KindToolRan: "tool-ran", KindInterrupt: "interrupt", KindCompaction: "compaction",
	KindError: "error", KindRollback: "rollback", KindNote: "note", KindUnknown: "unknown",
	KindDamage: "damage", KindTurnMark: "turn-mark",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Source is the provenance of a prompt: who put this input before the model.
type Source uint8

const (
	// SourceUnknown is input whose author the record does not establish
	// (an origin kind tailproof does not know, an SDK caller). Never resent.
	SourceUnknown Source = iota
	// SourceUser is input a person typed for this session.
	SourceUser
	// SourceInjected is context the harness added: environment, instructions,
	// AGENTS.md, attachments, system reminders.
	SourceInjected
	// SourceMeta is a harness meta record (Claude Code isMeta).
	SourceMeta
	// SourceHook is hook output or a hook's prompt.
	SourceHook
	// SourceNotification is a background task's notification.
	SourceNotification
	// SourceScheduler is a scheduled wake-up: loops, cron, auto-continuation.
	SourceScheduler
	// SourceCommand is a slash or shell command the harness ran locally.
	SourceCommand
	// SourceCommandOutput is a local command's output fed to the model.
	SourceCommandOutput
	// SourceSummary is a compaction summary standing in for earlier history.
	SourceSummary
	// SourceAgent is input from another agent (peer, coordinator, parent).
	SourceAgent
)

var sourceNames = [...]string{
	SourceUnknown: "unknown", SourceUser: "user", SourceInjected: "injected", SourceMeta: "meta",
	SourceHook: "hook", SourceNotification: "notification", SourceScheduler: "scheduler",
	SourceCommand: "command", SourceCommandOutput: "command-output", SourceSummary: "summary",
	SourceAgent: "agent",
}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// Resendable reports whether input of this source may be put before the model
// again on resume: a person's input only. Resending a notification, a hook's
// prompt or injected context is the failure Claude Code #90526 and Qwen
// #12042 describe.
func (s Source) Resendable() bool { return s == SourceUser }

// End is how the harness says a turn ended.
type End uint8

const (
	EndNone End = iota
	// EndUnstated: the harness recorded that the turn ended but not how
	// (Claude Code's system/turn_duration, written after an interrupt too).
	EndUnstated
	// EndCompleted: the harness says the turn ran to its end.
	EndCompleted
	// EndInterrupted: aborted — by the user, by a replacing turn, a budget;
	// Reason carries the harness's word.
	EndInterrupted
	// EndCancelled: cancelled before or while running.
	EndCancelled
	// EndFailed: ended by an error.
	EndFailed
)

var endNames = [...]string{
	EndNone: "none", EndUnstated: "unstated", EndCompleted: "completed",
	EndInterrupted: "interrupted", EndCancelled: "cancelled", EndFailed: "failed",
}

func (e End) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return "end(" + strconv.Itoa(int(e)) + ")"
}

// Stop says where a model message stood when its record was written.
type Stop uint8

const (
	// StopOpen: the message was still streaming (Claude Code stop_reason
	// null on a message's intermediate lines).
	StopOpen Stop = iota
	// StopContinue: complete, and the model meant to go on (tool_use stop,
	// Codex commentary phase).
	StopContinue
	// StopFinal: complete, and the model meant it as its answer (end_turn,
	// Codex final_answer).
	StopFinal
	// StopUnclear: complete, with no word on whether the model meant to go on
	// (no phase, max_tokens, an unknown stop reason).
	StopUnclear
)

var stopNames = [...]string{StopOpen: "open", StopContinue: "continue", StopFinal: "final", StopUnclear: "unclear"}

func (s Stop) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return "stop(" + strconv.Itoa(int(s)) + ")"
}

// Act is one thing a record did, in the harness-neutral vocabulary. A record
// maps to zero or more acts (a Claude Code user record holding two
// tool_result blocks is two ToolResult acts). Fields that do not apply to a
// kind are left zero.
type Act struct {
	Kind Kind
	Pos  events.Position
	Time events.Time
	// Seq is the harness's own sequence number (Codex ordinal), when HasSeq.
	Seq    int64
	HasSeq bool
	// N is the number of turns a KindRollback undoes.
	N int64

	// Identities. Turn is the harness's turn id; Prompt the prompt id;
	// Message groups the records of one message; UUID and Parent are the
	// record's own identity and its parent link.
	Turn, Prompt, Message string
	UUID, Parent          string

	// Call and Name identify a tool call (ToolCall, ToolResult, ToolRan).
	Call, Name string

	// Source and Origin: who wrote a prompt and how that is known
	// (events.OriginCarried from a provenance field, OriginStructural from the
	// record type, OriginGuessed from content).
	Source Source
	Origin events.Origin

	// End and Reason: how a turn ended (TurnEnd) or why it was interrupted
	// (Interrupt), in the harness's own words.
	End    End
	Reason string
	// Since, when HasSince, is what an end record says of where its turn
	// began: the uuid of the record just before the turn's first record,
	// "" for the file's first (Qwen's branch_checkpoint
	// startExclusiveRecordUuid). An end whose Since is not the open turn's
	// is another turn's.
	Since    string
	HasSince bool

	// Text is a prompt's text — what a resume would send — and nothing for
	// other kinds (outputs are not kept).
	Text string

	// Stop applies to Output and Reasoning. On a Prompt, StopUnclear says the
	// harness may end the turn right at this input without writing anything
	// more (Qwen Code's blocking UserPromptSubmit hook), until a mark of the
	// turn shows it went on. On a ToolResult, StopFinal says
	// the harness ends the turn once the batch this result belongs to is
	// answered, with no model call after it (Qwen Code's permission-cancelled
	// call, stopAfterPermissionCancel); every other value says nothing.
	Stop Stop
	// Failed marks a ToolResult the harness flagged as an error; Retry marks
	// an Error that was a retry notice.
	Failed, Retry bool
	// Side marks a record of another stream written into this file (Claude
	// Code sidechains): it is never part of the main conversation's turns.
	Side bool
	// Steer marks a prompt delivered into the running turn rather than
	// starting one (Claude Code's queued_command attachments, Qwen's
	// mid_turn_user_message).
	Steer bool

	// Damage is the positioned decode error of a KindDamage act; Torn says
	// it is a final fragment never written whole (see Unterminated), the
	// only damage that may be discarded.
	Damage *events.Error
	Torn   bool
	// Native is the native event kind the act came from, for traces.
	Native events.Kind
}

// Describe is the act's stable one-line text form, used in traces, scenario
// files and errors.
func (a Act) Describe() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(a.Pos.Line))
	b.WriteByte(' ')
	b.WriteString(a.Kind.String())
	kv := func(k, v string) {
		if v != "" {
			b.WriteByte(' ')
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(v)
		}
	}
	if a.HasSeq {
		kv("seq", strconv.FormatInt(a.Seq, 10))
	}
	kv("turn", a.Turn)
	kv("prompt", a.Prompt)
	kv("msg", a.Message)
	kv("uuid", a.UUID)
	kv("parent", a.Parent)
	kv("call", a.Call)
	kv("name", a.Name)
	switch a.Kind {
	case KindPrompt, KindInterrupt:
		b.WriteString(" source=" + a.Source.String())
		if a.Origin == events.OriginGuessed {
			b.WriteString("(guessed)")
		}
	case KindTurnEnd:
		b.WriteString(" end=" + a.End.String())
		if a.HasSince {
			b.WriteString(" since=" + strconv.Quote(a.Since))
		}
	case KindOutput, KindReasoning:
		b.WriteString(" stop=" + a.Stop.String())
	case KindToolResult:
		if a.Stop == StopFinal {
			b.WriteString(" ends-turn")
		}
	case KindRollback:
		if a.N != 0 { // 0: the record does not count turns (a Qwen rewind)
			kv("turns", strconv.FormatInt(a.N, 10))
		}
	}
	kv("reason", a.Reason)
	if a.Failed {
		b.WriteString(" failed")
	}
	if a.Retry {
		b.WriteString(" retry")
	}
	if a.Side {
		b.WriteString(" side")
	}
	if a.Steer {
		b.WriteString(" steer")
	}
	if a.Text != "" {
		b.WriteString(" " + strconv.Quote(objscan.Shorten(a.Text, 40)))
	}
	if a.Damage != nil {
		b.WriteString(" " + damageClass(a.Damage))
		if a.Damage.Kind == events.ErrTornTail && !a.Torn {
			b.WriteString("(terminated)")
		}
	}
	return b.String()
}

func (a Act) String() string { return a.Describe() }

func damageClass(e *events.Error) string {
	switch e.Kind {
	case events.ErrTornTail:
		return "torn-tail"
	case events.ErrCorrupt:
		return "corrupt"
	case events.ErrLineTooLong:
		return "too-long"
	}
	return "damage"
}
