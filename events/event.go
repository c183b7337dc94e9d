package events

import (
	"fmt"
	"strconv"
	"strings"
)

// Stream names the durable source an event was read from. The four built-in
// streams cover what Qwen Code and dsh write; a harness may use any other
// non-empty name for its own sources.
type Stream string

const (
	StreamTranscript  Stream = "transcript"   // Qwen <id>.jsonl chat records
	StreamLedger      Stream = "ledger"       // Qwen <id>.ledger.jsonl prompt terminal ledger
	StreamSessionLog  Stream = "session_log"  // dsh <id>.jsonl session event log
	StreamLiveJournal Stream = "live_journal" // a daemon's in-memory journal of the unfinished turn
)

// Position locates an event in its stream: the 1-based physical line and the
// byte offset at which the record starts. Two records glued on one line share
// the line number and differ in offset.
type Position struct {
	Line   int
	Offset int64
}

func (p Position) String() string {
	return "line " + strconv.Itoa(p.Line) + ", offset " + strconv.FormatInt(p.Offset, 10)
}

// Time is a wall-clock reading in Unix milliseconds, as every format here
// writes it (Date.now() or an ISO string with millisecond precision). OK is
// false when the record carried no time or it did not parse; such a time must
// never be compared.
type Time struct {
	Ms int64
	OK bool
}

func (t Time) String() string {
	if !t.OK {
		return "?"
	}
	return strconv.FormatInt(t.Ms, 10)
}

// Kind is the stable name of an event type: "<codec>.<type>[/<subtype>]",
// for example "qwen.user/notification", "ledger.terminal", "dsh.turn/start".
type Kind string

// Body is the typed payload of an event. Describe returns one stable line of
// text used in traces, scenario files and errors: the same body always
// describes the same way, byte for byte.
type Body interface {
	Describe() string
}

// Event is the one envelope every source produces.
type Event struct {
	Stream     Stream
	Pos        Position
	UUID       string // record identity where the format has one
	ParentUUID string // "" when the format has none or the record is a root
	Time       Time
	Provenance Provenance
	Origin     Origin // how Provenance was established
	Kind       Kind
	Body       Body
}

// Describe is the event's stable one-line text form.
func (e Event) Describe() string {
	var b strings.Builder
	b.WriteString(string(e.Stream))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(e.Pos.Line))
	b.WriteByte(' ')
	b.WriteString(string(e.Kind))
	if e.UUID != "" {
		b.WriteString(" uuid=")
		b.WriteString(e.UUID)
	}
	if e.ParentUUID != "" {
		b.WriteString(" parent=")
		b.WriteString(e.ParentUUID)
	}
	if e.Time.OK {
		b.WriteString(" t=")
		b.WriteString(e.Time.String())
	}
	if e.Provenance != ProvenanceAbsent || e.Origin != OriginNone {
		b.WriteString(" prov=")
		b.WriteString(e.Provenance.String())
		if e.Origin == OriginGuessed {
			b.WriteString("(guessed)")
		}
	}
	if e.Body != nil {
		if d := e.Body.Describe(); d != "" {
			b.WriteByte(' ')
			b.WriteString(d)
		}
	}
	return b.String()
}

func (e Event) String() string { return e.Describe() }

// Provenance says who or what produced a record. It is carried from the
// record through every projection so that no decision has to guess it from
// the shape of the content (the gap Qwen tracks as #12042).
type Provenance uint8

const (
	// ProvenanceAbsent marks a legacy record written without the field. It is
	// deliberately distinct from ProvenanceSystem: absent means "not known",
	// never "system".
	ProvenanceAbsent Provenance = iota
	ProvenanceRealUser
	ProvenanceAssistant
	ProvenanceToolResult
	ProvenanceSystem // system notification or other system-injected record
	ProvenanceCron   // scheduler wake-up
	ProvenanceGoalControl
	ProvenanceGoalRuntime
)

var provenanceNames = [...]string{
	ProvenanceAbsent:      "absent",
	ProvenanceRealUser:    "real_user",
	ProvenanceAssistant:   "assistant_output",
	ProvenanceToolResult:  "tool_result",
	ProvenanceSystem:      "system",
	ProvenanceCron:        "cron",
	ProvenanceGoalControl: "goal_control",
	ProvenanceGoalRuntime: "goal_runtime",
}

func (p Provenance) String() string {
	if int(p) < len(provenanceNames) {
		return provenanceNames[p]
	}
	return fmt.Sprintf("provenance(%d)", uint8(p))
}

// IsSystemLike reports whether records of this provenance are injected by the
// host rather than produced by the user, the model or a tool the model called:
// system notifications, cron wake-ups and goal-runtime messages. Such records
// are never resent as user intent and never count as evidence for a prompt.
func (p Provenance) IsSystemLike() bool {
	return p == ProvenanceSystem || p == ProvenanceCron || p == ProvenanceGoalRuntime
}

// ParseProvenance maps the Qwen Code `provenance` field value to a Provenance.
func ParseProvenance(s string) (Provenance, bool) {
	switch s {
	case "real_user":
		return ProvenanceRealUser, true
	case "assistant_output":
		return ProvenanceAssistant, true
	case "tool_result":
		return ProvenanceToolResult, true
	case "system":
		return ProvenanceSystem, true
	case "cron":
		return ProvenanceCron, true
	case "goal_control":
		return ProvenanceGoalControl, true
	case "goal_runtime":
		return ProvenanceGoalRuntime, true
	}
	return ProvenanceAbsent, false
}

// Origin records how an event's Provenance was established.
type Origin uint8

const (
	OriginNone       Origin = iota // no provenance known (legacy record, field absent)
	OriginCarried                  // read from a provenance field the record carries
	OriginStructural               // implied by the format itself (a dsh tool/result is a tool result)
	OriginGuessed                  // inferred from content shape; a fallback that says so
)

func (o Origin) String() string {
	switch o {
	case OriginCarried:
		return "carried"
	case OriginStructural:
		return "structural"
	case OriginGuessed:
		return "guessed"
	}
	return "none"
}
