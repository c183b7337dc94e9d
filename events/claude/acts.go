package claude

import (
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
)

// Harness is Claude Code transcripts for turn.Read.
func Harness() turn.Harness {
	return turn.Harness{Name: "claude", Codec: Codec{}, Mapper: Mapper{}}
}

// Mapper maps transcript records onto the vocabulary (ADR 0018 has the
// table). It is a turn.FileMapper: one record, a system/stop_hook_summary,
// says the turn ended only in the light of the records before it, which
// the mapper ForFile returns keeps track of. Mapper's own Map reads every
// record alone and takes a summary for a note.
type Mapper struct{}

// interruptPrefix opens the interrupt sentinels Claude Code writes as user
// records: "[Request interrupted by user]" and "[Request interrupted by user
// for tool use]" (both literal in the 2.1.328 bundle).
const interruptPrefix = "[Request interrupted by user"

// Map implements turn.Mapper.
func (Mapper) Map(dst []turn.Act, ev events.Event) []turn.Act { return mapRecord(dst, ev, false) }

// ForFile implements turn.FileMapper.
func (Mapper) ForFile() turn.Mapper { return &fileMapper{} }

// fileMapper reads one file's records in order. quiet says the main
// chain's last model response ended in output (no tool_use after it, a
// stop reason of end_turn or none stated) and nothing has come since but
// Stop-hook bookkeeping: hook progress, a hook's success or stop
// attachment, file snapshots. Sidechain records leave it as it is.
//
// Why that decides what a stop_hook_summary means (ADR 0018 amendment
// 2026-12-02 afternoon, from the 2.1.39, 2.1.92 and 2.1.328 bundles): the
// query loop runs the Stop hooks only after a response that streamed to its
// end without an abort and asked for no tool, and writes the summary only
// once every hook has run with no abort seen (an Esc during the hooks
// writes the interrupt sentinel and no summary). After the summary the loop
// returns — unless a hook blocked or added context, or a reminder was
// queued before the hooks: then the model runs again, and each of those
// left its record (a meta user record, a hook_additional_context
// attachment, a hookErrors entry) before or in the summary. A summary with
// no hook errors and no added context, after a quiet tail, is the turn's
// completion; any other is a note.
type fileMapper struct{ quiet bool }

func (m *fileMapper) Map(dst []turn.Act, ev events.Event) []turn.Act {
	n := len(dst)
	dst = mapRecord(dst, ev, m.quiet)
	r, ok := ev.Body.(*Record)
	if !ok || r.IsSidechain {
		return dst
	}
	switch r.Type {
	case TypeAssistant:
		m.quiet = false
		if k := len(dst); k > n && !r.IsAPIErrorMessage {
			last := dst[k-1]
			m.quiet = last.Kind == turn.KindOutput && (last.Stop == turn.StopFinal || last.Stop == turn.StopUnclear)
		}
	case TypeProgress, TypeFileHistorySnapshot:
	case TypeAttachment:
		switch r.AttachmentType {
		case "hook_success", "hook_stopped_continuation":
		default:
			m.quiet = false
		}
	default:
		m.quiet = false
	}
	return dst
}

// endsTurn reports whether a stop_hook_summary, after a quiet tail, is the
// end of the turn: no hook reported an error or a block (every blocking
// error is a hookErrors entry) and none added context for the model.
func endsTurn(r *Record) bool {
	return r.HasHookErrors && r.HookErrors == 0 && r.HookContexts == 0
}

func mapRecord(dst []turn.Act, ev events.Event, quiet bool) []turn.Act {
	r, ok := ev.Body.(*Record)
	if !ok {
		return dst
	}
	base := turn.Act{Pos: ev.Pos, Time: ev.Time, UUID: r.UUID, Parent: r.ParentUUID,
		Prompt: r.PromptID, Side: r.IsSidechain, Native: ev.Kind}
	switch r.Type {
	case TypeUser:
		return userActs(dst, base, r)
	case TypeAssistant:
		return assistantActs(dst, base, r)
	case TypeSystem:
		a := base
		switch r.Subtype {
		case "turn_duration":
			// Written when a turn ended: it says so, not how (the guards
			// decide how from the turn's other records).
			a.Kind, a.End = turn.KindTurnEnd, turn.EndUnstated
		case "api_error":
			a.Kind, a.Retry, a.Reason = turn.KindError, true, "api_error"
		case "compact_boundary":
			a.Kind = turn.KindCompaction
		case "stop_hook_summary":
			if quiet && endsTurn(r) {
				a.Kind, a.End, a.Reason = turn.KindTurnEnd, turn.EndCompleted, "the Stop hooks ran after the model's last response"
				if r.PreventedContinuation {
					a.Reason += "; a stop hook prevented continuation"
				}
				break
			}
			a.Kind = turn.KindNote
			if r.PreventedContinuation {
				a.Reason = "a stop hook prevented continuation"
			}
		default:
			a.Kind = turn.KindNote
		}
		return append(dst, a)
	case TypeAttachment:
		a := base
		if r.AttachmentType != "queued_command" {
			a.Kind = turn.KindNote
			return append(dst, a)
		}
		// A message the person typed while the turn ran, delivered into it
		// (the 2.1.328 bundle writes these as queued_command attachments).
		a.Kind, a.Text, a.Steer = turn.KindPrompt, r.AttachmentPrompt, true
		q := Record{OriginKind: r.AttachmentOrigin}
		a.Source, a.Origin, a.Reason = source(&q, r.AttachmentPrompt)
		if r.AttachmentOrigin == "" && a.Source == turn.SourceUser {
			// A queued command is typed input by its record type.
			a.Origin = events.OriginStructural
		}
		return append(dst, a)
	case TypeSummary, TypeFileHistorySnapshot, TypeQueueOperation, TypeProgress,
		"permission-mode", "last-prompt", "custom-title", "tag", "agent-name", "pr-link":
		a := base
		a.Kind = turn.KindNote
		return append(dst, a)
	}
	a := base
	a.Kind = turn.KindUnknown
	return append(dst, a)
}

func assistantActs(dst []turn.Act, base turn.Act, r *Record) []turn.Act {
	base.Message = r.MessageID
	if r.IsAPIErrorMessage {
		// A synthetic assistant message standing for an API failure.
		a := base
		a.Kind, a.Reason = turn.KindError, "API error message"
		return append(dst, a)
	}
	stop := stopOf(r)
	n := len(dst)
	for _, bl := range r.Blocks {
		a := base
		switch bl.Type {
		case "tool_use":
			a.Kind, a.Call, a.Name = turn.KindToolCall, bl.ID, bl.Name
		case "thinking", "redacted_thinking":
			a.Kind, a.Stop = turn.KindReasoning, stop
		default: // text, and server-side tool blocks run inside the response
			a.Kind, a.Stop = turn.KindOutput, stop
		}
		dst = append(dst, a)
	}
	if len(dst) == n {
		a := base
		a.Kind, a.Stop = turn.KindOutput, stop
		dst = append(dst, a)
	}
	return dst
}

// stopOf reads the message's stop reason. Claude Code writes one line per
// content block. A null (or absent) stop reason does not say the message
// was still streaming: 2.0.76 to 2.1.39 write null on every line, final
// answers included (public transcripts of marot/spotter, fasthooks); 2.1.92
// and 2.1.328 set the reason on the message object at message_delta, and a
// line carries it only when the writer's queue drained after that (every
// 100 ms in 2.1.92), so a finished message's last line can be null too. It
// is a complete message whose intent the record does not state
// (StopUnclear), which never proves interrupted; an interrupt is told by
// Claude Code's sentinel record, a finished turn by its Stop hooks' summary
// (ADR 0018 amendments, 2026-12-02).
func stopOf(r *Record) turn.Stop {
	if !r.HasStopReason {
		return turn.StopUnclear
	}
	switch r.StopReason {
	case "end_turn":
		return turn.StopFinal
	case "tool_use":
		return turn.StopContinue
	}
	return turn.StopUnclear // max_tokens, stop_sequence, refusal, pause_turn, …
}

func userActs(dst []turn.Act, base turn.Act, r *Record) []turn.Act {
	hasResults := false
	for _, bl := range r.Blocks {
		if bl.Type == "tool_result" {
			hasResults = true
			a := base
			a.Kind, a.Call, a.Failed = turn.KindToolResult, bl.ToolUseID, bl.IsError
			dst = append(dst, a)
		}
	}
	text := r.Text
	if !r.ContentIsString {
		var parts []string
		for _, bl := range r.Blocks {
			if bl.Type == "text" {
				parts = append(parts, bl.Text)
			}
		}
		text = strings.Join(parts, "\n")
	}
	if strings.HasPrefix(strings.TrimSpace(text), interruptPrefix) {
		a := base
		a.Kind, a.Source, a.Origin = turn.KindInterrupt, turn.SourceInjected, events.OriginStructural
		a.Reason = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(text), "[Request interrupted by "), "]")
		if r.InterruptedByShutdown {
			a.Reason += ", by shutdown"
		}
		return append(dst, a)
	}
	if hasResults && strings.TrimSpace(text) == "" {
		return dst
	}
	a := base
	a.Kind, a.Text = turn.KindPrompt, text
	a.Source, a.Origin, a.Reason = source(r, text)
	if hasResults && a.Source == turn.SourceUser && a.Origin == events.OriginGuessed {
		// Text riding with tool results is the harness's, not a new prompt.
		a.Source = turn.SourceInjected
	}
	return append(dst, a)
}

// source classifies a user record's provenance: carried fields first
// (isCompactSummary, isMeta, origin.kind, promptSource), content shape only
// when they are absent, and then marked guessed. Command tags win over a
// human origin: a slash command the person typed is a command, and resending
// it runs the command again.
func source(r *Record, text string) (turn.Source, events.Origin, string) {
	t := strings.TrimLeft(text, " \t\r\n")
	switch {
	case r.IsCompactSummary:
		return turn.SourceSummary, events.OriginCarried, ""
	case r.IsMeta:
		return turn.SourceMeta, events.OriginCarried, ""
	case strings.HasPrefix(t, "<command-name>"), strings.HasPrefix(t, "<command-message>"), strings.HasPrefix(t, "<bash-input>"):
		return turn.SourceCommand, originOf(r), ""
	case strings.HasPrefix(t, "<local-command-stdout>"), strings.HasPrefix(t, "<local-command-stderr>"),
		strings.HasPrefix(t, "<bash-stdout>"), strings.HasPrefix(t, "<bash-stderr>"):
		return turn.SourceCommandOutput, originOf(r), ""
	}
	switch r.OriginKind {
	case "":
	case "human":
		return turn.SourceUser, events.OriginCarried, ""
	case "task-notification":
		return turn.SourceNotification, events.OriginCarried, ""
	case "loop", "auto-continuation":
		return turn.SourceScheduler, events.OriginCarried, ""
	case "slash-command":
		return turn.SourceCommand, events.OriginCarried, ""
	case "peer", "coordinator", "channel", "remote":
		return turn.SourceAgent, events.OriginCarried, ""
	case "plugin":
		return turn.SourceHook, events.OriginCarried, ""
	default:
		// voice-call, person, composer, suggestion, observer-activity,
		// unclassified and kinds still to come: not established as this
		// session's person typing, so never resent.
		return turn.SourceUnknown, events.OriginCarried, "origin.kind " + r.OriginKind
	}
	switch r.PromptSource {
	case "":
	case "typed", "user":
		return turn.SourceUser, events.OriginCarried, ""
	case "system":
		return turn.SourceInjected, events.OriginCarried, ""
	default:
		return turn.SourceUnknown, events.OriginCarried, "promptSource " + r.PromptSource
	}
	switch {
	case strings.HasPrefix(t, "<task-notification>"):
		return turn.SourceNotification, events.OriginGuessed, ""
	case strings.HasPrefix(t, "<system-reminder>"):
		return turn.SourceInjected, events.OriginGuessed, ""
	case strings.HasPrefix(t, "Caveat: "):
		return turn.SourceMeta, events.OriginGuessed, ""
	}
	return turn.SourceUser, events.OriginGuessed, ""
}

func originOf(r *Record) events.Origin {
	if r.OriginKind != "" || r.PromptSource != "" {
		return events.OriginCarried
	}
	return events.OriginGuessed
}
