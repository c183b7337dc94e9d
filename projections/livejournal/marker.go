package livejournal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Marker vocabulary.
const (
	// ReasonReplayWindowExceeded is the only reason a marker may carry; the
	// SDK validators Qwen ships require it, and so does Validate.
	ReasonReplayWindowExceeded = "replay_window_exceeded"
	// ScopeLiveJournal marks a marker about the unfinished turn's journal.
	// A marker without a scope is about the compacted replay window.
	ScopeLiveJournal = "live_journal"
)

// Marker is a history_truncated event: what a snapshot dropped and why.
//
// Two shapes share it. The live-journal marker (Scope == ScopeLiveJournal)
// starts a snapshot's liveJournal when the unfinished turn outgrew the
// journal; its owner is PromptID. The replay-window marker (Scope == "")
// starts compactedReplay when completed history outgrew the replay byte
// budget; it may carry TruncatedTurns and never MaxEvents.
//
// Optional wire fields map to zero values: PromptID, Scope, RecordID "" and
// MaxEvents, TruncatedTurns 0 mean absent. That is unambiguous because a
// present value must be non-empty / positive, or the marker is malformed.
type Marker struct {
	PromptID                string // envelope promptId (the session's active prompt), optional
	Reason                  string
	Scope                   string
	TruncatedEvents         int
	RetainedEvents          int
	MaxBytes                int
	MaxEvents               int // live journal only, optional
	TruncatedTurns          int // replay window only, optional
	RecordID                string
	FullTranscriptAvailable bool
}

// IsLiveJournal reports whether the marker is about the unfinished turn.
func (m Marker) IsLiveJournal() bool { return m.Scope == ScopeLiveJournal }

// Validate checks every field, optional ones included: a present optional
// field with a wrong value makes the whole marker malformed, because a reader
// that repaired on a half-understood marker could replace the wrong turn.
func (m Marker) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("livejournal: history_truncated: "+format+": %w", append(args, ErrMalformed)...)
	}
	switch {
	case m.Reason != ReasonReplayWindowExceeded:
		return bad("reason %q is not %q", m.Reason, ReasonReplayWindowExceeded)
	case m.Scope != "" && m.Scope != ScopeLiveJournal:
		return bad("unknown scope %q", m.Scope)
	case m.TruncatedEvents < 0 || int64(m.TruncatedEvents) > MaxSafeInteger:
		return bad("truncatedEvents %d out of range", m.TruncatedEvents)
	case m.IsLiveJournal() && m.TruncatedEvents == 0:
		return bad("a live_journal marker that truncated nothing")
	case m.RetainedEvents < 0 || int64(m.RetainedEvents) > MaxSafeInteger:
		return bad("retainedEvents %d out of range", m.RetainedEvents)
	case m.MaxBytes < 1 || int64(m.MaxBytes) > MaxSafeInteger:
		return bad("maxBytes %d must be a positive safe integer", m.MaxBytes)
	case m.MaxEvents < 0 || int64(m.MaxEvents) > MaxSafeInteger:
		return bad("maxEvents %d must be a positive safe integer", m.MaxEvents)
	case m.MaxEvents > 0 && !m.IsLiveJournal():
		return bad("maxEvents on a replay-window marker")
	case m.MaxEvents > 0 && m.RetainedEvents > m.MaxEvents:
		return bad("retainedEvents %d exceeds maxEvents %d", m.RetainedEvents, m.MaxEvents)
	case m.TruncatedTurns < 0 || int64(m.TruncatedTurns) > MaxSafeInteger:
		return bad("truncatedTurns %d must be a positive safe integer", m.TruncatedTurns)
	case m.TruncatedTurns > 0 && m.IsLiveJournal():
		return bad("truncatedTurns on a live_journal marker")
	}
	return nil
}

// Event returns the marker as a daemon event (type history_truncated, no
// id). It does not validate; call Validate when the values are not your own.
func (m Marker) Event() *Event {
	return &Event{Type: TypeHistoryTruncated, PromptID: m.PromptID, Data: m.appendData(nil)}
}

// MarshalJSON returns the marker's wire line, refusing an invalid marker.
func (m Marker) MarshalJSON() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m.Event().AppendJSON(nil), nil
}

func (m Marker) appendData(dst []byte) []byte {
	num := func(dst []byte, key string, v int) []byte {
		dst = append(dst, `,"`...)
		dst = append(dst, key...)
		dst = append(dst, `":`...)
		return strconv.AppendInt(dst, int64(v), 10)
	}
	dst = append(dst, `{"reason":`...)
	dst = appendJSONString(dst, m.Reason)
	if m.Scope != "" {
		dst = append(dst, `,"scope":`...)
		dst = appendJSONString(dst, m.Scope)
	}
	dst = num(dst, "truncatedEvents", m.TruncatedEvents)
	dst = num(dst, "retainedEvents", m.RetainedEvents)
	dst = num(dst, "maxBytes", m.MaxBytes)
	if m.MaxEvents != 0 {
		dst = num(dst, "maxEvents", m.MaxEvents)
	}
	if m.TruncatedTurns != 0 {
		dst = num(dst, "truncatedTurns", m.TruncatedTurns)
	}
	if m.RecordID != "" {
		dst = append(dst, `,"recordId":`...)
		dst = appendJSONString(dst, m.RecordID)
	}
	dst = append(dst, `,"fullTranscriptAvailable":`...)
	dst = strconv.AppendBool(dst, m.FullTranscriptAvailable)
	return append(dst, '}')
}

// DecodeMarker parses a history_truncated wire line and validates it.
func DecodeMarker(line []byte) (Marker, error) {
	ev, err := DecodeEvent(line)
	if err != nil {
		return Marker{}, err
	}
	return MarkerFromEvent(ev)
}

// MarkerFromEvent reads the marker carried by ev and validates it.
func MarkerFromEvent(ev *Event) (Marker, error) {
	if ev == nil {
		return Marker{}, fmt.Errorf("livejournal: history_truncated: nil event: %w", ErrMalformed)
	}
	if ev.Type != TypeHistoryTruncated {
		return Marker{}, fmt.Errorf("livejournal: event type %q is not %s: %w", ev.Type, TypeHistoryTruncated, ErrMalformed)
	}
	if ev.ID != 0 {
		// Markers are synthesized per snapshot; an id would put one under a
		// client's event watermark as if it had been delivered live.
		return Marker{}, fmt.Errorf("livejournal: history_truncated: a marker carries no id, got %d: %w", ev.ID, ErrMalformed)
	}
	var raw map[string]json.RawMessage
	if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &raw) != nil || raw == nil {
		return Marker{}, fmt.Errorf("livejournal: history_truncated: data must be an object: %w", ErrMalformed)
	}
	m := Marker{PromptID: ev.PromptID}
	field := func(err error) error { return fmt.Errorf("livejournal: history_truncated: %w", err) }
	required := func(key string) error {
		return fmt.Errorf("livejournal: history_truncated: %s is required: %w", key, ErrMalformed)
	}
	var present bool
	var err error
	if m.Reason, present, err = optString(raw, "reason"); err != nil {
		return Marker{}, field(err)
	} else if !present {
		return Marker{}, required("reason")
	}
	if m.Scope, _, err = optString(raw, "scope"); err != nil {
		return Marker{}, field(err)
	}
	if m.RecordID, _, err = optString(raw, "recordId"); err != nil {
		return Marker{}, field(err)
	}
	ints := []struct {
		key      string
		dst      *int
		required bool
		positive bool // a present optional count must be positive
	}{
		{"truncatedEvents", &m.TruncatedEvents, true, false},
		{"retainedEvents", &m.RetainedEvents, true, false},
		{"maxBytes", &m.MaxBytes, true, true},
		{"maxEvents", &m.MaxEvents, false, true},
		{"truncatedTurns", &m.TruncatedTurns, false, true},
	}
	for _, f := range ints {
		v, present, err := optInt(raw, f.key)
		if err != nil {
			return Marker{}, field(err)
		}
		if !present {
			if f.required {
				return Marker{}, required(f.key)
			}
			continue
		}
		if v < 0 || (f.positive && v == 0) {
			return Marker{}, fmt.Errorf("livejournal: history_truncated: %s must be positive, got %d: %w", f.key, v, ErrMalformed)
		}
		*f.dst = int(v)
	}
	if m.FullTranscriptAvailable, present, err = optBool(raw, "fullTranscriptAvailable"); err != nil {
		return Marker{}, field(err)
	} else if !present {
		return Marker{}, required("fullTranscriptAvailable")
	}
	if err := m.Validate(); err != nil {
		return Marker{}, err
	}
	return m, nil
}

// Owner returns the prompt the discarded events belonged to. The marker's
// promptId decides when present: the daemon copied it from the session's
// authoritative active prompt. An older daemon sends none; then the retained
// events must name exactly one prompt between them, or the marker is
// unattributable and nothing may be repaired on its behalf.
func (m Marker) Owner(retained []*Event) (string, error) {
	if !m.IsLiveJournal() {
		return "", fmt.Errorf("livejournal: a replay-window marker has no owning prompt: %w", ErrUnattributable)
	}
	if m.PromptID != "" {
		return m.PromptID, nil
	}
	seen := map[string]struct{}{}
	for _, ev := range retained {
		if ev != nil && ev.PromptID != "" && ev.Type != TypeHistoryTruncated {
			seen[ev.PromptID] = struct{}{}
		}
	}
	if len(seen) == 1 {
		for id := range seen {
			return id, nil
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return "", fmt.Errorf("livejournal: marker has no promptId and the retained events name %d prompts %v: %w",
		len(ids), ids, ErrUnattributable)
}

// Status is the text a client shows for the marker. It names which history
// was cut (the replay window of completed turns, or the live turn), says
// that the newest events were kept and older ones discarded, and promises
// recovery only when the daemon said the full transcript is available.
func (m Marker) Status() string {
	var b strings.Builder
	limits := "limit " + plural(m.MaxBytes, "byte")
	if m.MaxEvents > 0 {
		limits = "limits " + plural(m.MaxEvents, "event") + ", " + plural(m.MaxBytes, "byte")
	}
	if m.IsLiveJournal() {
		b.WriteString("Live turn truncated")
		if m.PromptID != "" {
			b.WriteString(" (prompt " + m.PromptID + ")")
		}
		fmt.Fprintf(&b, ": the live journal kept the newest %s and discarded %s (%s).",
			plural(m.RetainedEvents, "event"), plural(m.TruncatedEvents, "older event"), limits)
		if m.FullTranscriptAvailable {
			b.WriteString(" The complete turn will be restored from the full transcript after the turn ends.")
		} else {
			b.WriteString(" The discarded events cannot be recovered.")
		}
		return b.String()
	}
	b.WriteString("Replay history truncated")
	fmt.Fprintf(&b, ": the replay window kept the newest %s and discarded %s", plural(m.RetainedEvents, "event"),
		plural(m.TruncatedEvents, "older event"))
	if m.TruncatedTurns > 0 {
		fmt.Fprintf(&b, " from %s", plural(m.TruncatedTurns, "turn"))
	}
	fmt.Fprintf(&b, " (%s).", limits)
	if m.FullTranscriptAvailable {
		b.WriteString(" Older history is available from the full transcript.")
	} else {
		b.WriteString(" The discarded history cannot be recovered.")
	}
	return b.String()
}

// Describe is the marker's stable one-line text form.
func (m Marker) Describe() string {
	var b bytes.Buffer
	b.WriteString(TypeHistoryTruncated)
	if m.PromptID != "" {
		b.WriteString(" prompt=" + m.PromptID)
	}
	b.WriteByte(' ')
	b.Write(m.appendData(nil))
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// ReplayWindowMarker builds the marker that starts a compacted replay whose
// completed history outgrew maxReplayBytes. It has no scope, no maxEvents and
// no owner; truncatedTurns and recordID are optional (0 / "").
func ReplayWindowMarker(truncatedEvents, retainedEvents, maxReplayBytes, truncatedTurns int, recordID string) (Marker, error) {
	m := Marker{
		Reason:                  ReasonReplayWindowExceeded,
		TruncatedEvents:         truncatedEvents,
		RetainedEvents:          retainedEvents,
		MaxBytes:                maxReplayBytes,
		TruncatedTurns:          truncatedTurns,
		RecordID:                recordID,
		FullTranscriptAvailable: true,
	}
	return m, m.Validate()
}
