package qwen

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events"
)

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
	// the chain built in pass 1 cannot be trusted. Walk reports it and
	// stops; the chain is degraded.
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

// LoadOptions tune LoadChain.
type LoadOptions struct {
	Decode DecodeOptions
	// MaxLineBytes bounds one physical line (<= 0: events.DefaultMaxLineBytes).
	// A longer line is reported in BadLines and its records are lost, which
	// Qwen (no limit) would have read: such a chain is Degraded.
	MaxLineBytes int
}

// Chain is the active conversation of a transcript, as Qwen's
// SessionService.loadSession builds conversation.messages: every line read
// with parseLineTolerant, records validated, the leaf is the last
// conversation record, the chain is walked back through parentUuid from it,
// and records sharing a uuid are aggregated into one.
//
// LoadChain keeps only a compact index; the records themselves are read again
// by Walk.
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
	// order, classified as events.ErrTornTail (nothing readable after),
	// events.ErrCorrupt (readable records follow) or events.ErrLineTooLong.
	BadLines []*events.Error
	// Streaming is true when Walk can emit records as it reads them (chain
	// order is file order and no uuid has fragments), with memory independent
	// of the transcript's size. Otherwise Walk holds the chain's records
	// (decoded, without payloads unless KeepPayloads) until the end of the
	// file, then aggregates and emits them.
	Streaming bool

	opts LoadOptions
	// want lists the objects Walk emits, sorted by object index; pos is the
	// chain position each belongs to.
	want []want
}

type want struct{ ord, pos uint32 }

// Degraded says why the chain may differ from the conversation the session
// really had, or "" when nothing suggests it: a gap, a cycle, fragments
// disagreeing on their parent, a hash collision, a skipped (invalid) record,
// or a corrupt or over-long line. A torn tail alone is not degradation — it
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

// entry is pass 1's index record for one valid conversation record: about
// 24 bytes, whatever the record's size.
type entry struct {
	u, p uint64 // hashes of uuid and parentUuid (0: no parent)
	ord  uint32 // object index
}

// emptyParent stands for parentUuid "": a root like null, but a different
// value when fragments' parents are compared.
const emptyParent = 1

// uuidHash is FNV-1a; 0 and 1 are reserved for null and "" parents. Collisions are
// possible (and can be forced by a hostile file): Walk verifies every link
// with the real strings.
func uuidHash[S string | []byte](s S) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	if h <= emptyParent {
		h += 2
	}
	return h
}

// LoadChain is pass 1: it reads every line of the transcript once, validates
// each record, indexes uuid → parent compactly (no message bodies kept),
// picks the leaf and walks the chain. open is called once here and once per
// Walk; its error is returned wrapped. A transcript whose valid records
// carry different session ids fails with ErrMixedSessionIDs.
func LoadChain(open func() (io.ReadCloser, error), opts LoadOptions) (*Chain, error) {
	c := &Chain{opts: opts}
	var (
		leafOrd = -1
		pending []*events.Error
	)
	p := getParser(DecodeOptions{}, true)
	defer putParser(p)
	res := &p.res
	// The index and the leaf's uuid are the parser's scratch: a decision
	// loads a chain per call, and small sessions should not pay for
	// growing them each time.
	entries, leaf := p.entries[:0], p.leaf[:0]
	defer func() { p.entries, p.leaf = entries[:0], leaf[:0] }()
	err := readLines(open, opts.MaxLineBytes, func(line events.Line) error {
		if line.TooLong {
			pending = append(pending, &events.Error{Stream: events.StreamTranscript, Pos: line.Pos,
				Kind: events.ErrLineTooLong, Detail: fmt.Sprintf("line of %d bytes", line.Size)})
			return nil
		}
		p.decodeLine(line.Bytes, res)
		if len(res.recs) > 0 {
			for _, e := range pending {
				if e.Kind == nil {
					e.Kind = events.ErrCorrupt
				}
			}
			c.BadLines = append(c.BadLines, pending...)
			pending = pending[:0]
		}
		if !res.complete {
			detail := res.detail
			if !line.Terminated {
				detail = "final fragment has no newline: " + detail
			}
			pending = append(pending, &events.Error{Stream: events.StreamTranscript, Pos: line.Pos, Detail: detail,
				Cause: ErrNotRecord})
		}
		for i := range res.recs {
			pr := &res.recs[i]
			idx := c.Objects
			c.Objects++
			id := &pr.id
			if idx == 0 {
				c.HasFirst = true
				p.setStr(&c.FirstSessionID, id.session)
				p.setStr(&c.FirstCwd, id.cwd)
				p.setStr(&c.FirstTS, id.ts)
				p.flush()
			}
			pos := events.Position{Line: line.Pos.Line, Offset: line.Pos.Offset + int64(pr.start)}
			if code, msg := identityProblem(pr); code != "" {
				c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: code, Message: msg, AffectsCompleteness: true,
					RecordIndex: idx, RecordID: string(id.uuid), Pos: pos})
				continue
			}
			c.Diagnostics = recordDiagnostics(pr, idx, pos, c.Diagnostics)
			c.Records++
			if c.Records == 1 {
				c.SessionID = c.FirstSessionID
				if string(id.session) != c.SessionID {
					c.SessionID = string(id.session)
				}
			} else if string(id.session) != c.SessionID {
				return fmt.Errorf("qwen: %s: %w: %q and %q", pos, ErrMixedSessionIDs, c.SessionID, id.session)
			}
			if !isConversationID(pr) {
				continue
			}
			if idx > int(^uint32(0)) {
				return fmt.Errorf("qwen: %s: more than 2^32 records", pos)
			}
			var ph uint64 // 0: null
			switch {
			case len(id.parent) > 0:
				ph = uuidHash(id.parent)
			case pr.parent != jNull:
				ph = emptyParent
			}
			entries = append(entries, entry{u: uuidHash(id.uuid), p: ph, ord: uint32(idx)})
			leafOrd = idx
			leaf = append(leaf[:0], id.uuid...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if leafOrd >= 0 {
		c.LeafUUID = string(leaf)
	}
	for _, e := range pending {
		if e.Kind == nil {
			e.Kind = events.ErrTornTail
		}
	}
	c.BadLines = append(c.BadLines, pending...)
	if leafOrd < 0 {
		if c.Records > 0 {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagArtifactOnly,
				Message: "The input contains no conversation records.", RecordIndex: -1})
		}
		return c, nil
	}
	// Sorted by (hash, object index): each uuid's fragments stay in file
	// order, first fragment first, and lookups are binary searches.
	leafHash := entries[len(entries)-1].u
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.u < b.u:
			return -1
		case a.u > b.u:
			return 1
		}
		return int(a.ord) - int(b.ord)
	})
	find := func(h uint64) int {
		i, ok := slices.BinarySearchFunc(entries, h, func(e entry, h uint64) int {
			switch {
			case e.u < h:
				return -1
			case e.u > h:
				return 1
			}
			return 0
		})
		if !ok {
			return -1
		}
		return i
	}
	// Fragments disagreeing on parentUuid (by hash; confirmed with strings
	// below).
	var conflicts [][2]uint32 // (first fragment ord, conflicting ord)
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].u == entries[i].u {
			if entries[j].p != entries[i].p {
				conflicts = append(conflicts, [2]uint32{entries[i].ord, entries[j].ord})
			}
			j++
		}
		i = j
	}
	// walkTranscriptUuidChain over group starts.
	visited := make([]uint64, (len(entries)+63)/64)
	// Sized up front: growing by appending would leave garbage copies of a
	// slice as long as the transcript.
	chain := slices.Grow(p.chain[:0], len(entries)) // entry indexes, leaf first
	defer func() { p.chain = chain[:0] }()
	gapChild, cycleAt := -1, -1
	for idx := find(leafHash); ; {
		if visited[idx>>6]&(1<<uint(idx&63)) != 0 {
			cycleAt = idx
			break
		}
		visited[idx>>6] |= 1 << uint(idx&63)
		chain = append(chain, uint32(idx))
		ph := entries[idx].p
		if ph == 0 || ph == emptyParent {
			break
		}
		next := find(ph)
		if next < 0 {
			gapChild = idx
			break
		}
		idx = next
	}
	visited = nil
	slices.Reverse(chain)
	c.Len = len(chain)
	c.Streaming = true
	nwant := 0
	for _, idx := range chain {
		for j := int(idx); j < len(entries) && entries[j].u == entries[idx].u; j++ {
			nwant++
		}
	}
	c.want = make([]want, 0, nwant)
	for k, idx := range chain {
		e := entries[idx]
		if k > 0 && e.ord <= c.want[len(c.want)-1].ord {
			c.Streaming = false
		}
		c.want = append(c.want, want{ord: e.ord, pos: uint32(k)})
		for j := int(idx) + 1; j < len(entries) && entries[j].u == e.u; j++ {
			c.Streaming = false
			c.want = append(c.want, want{ord: entries[j].ord, pos: uint32(k)})
		}
	}
	if !c.Streaming {
		slices.SortFunc(c.want, func(a, b want) int { return int(a.ord) - int(b.ord) })
	}
	// Rare shapes need uuid strings: read them back for just those objects.
	if len(conflicts) > 0 || gapChild >= 0 || cycleAt >= 0 {
		need := map[uint32]*Record{}
		for _, cf := range conflicts {
			need[cf[0]], need[cf[1]] = nil, nil
		}
		if gapChild >= 0 {
			need[entries[gapChild].ord] = nil
		}
		if cycleAt >= 0 {
			need[entries[cycleAt].ord] = nil
			need[entries[chain[0]].ord] = nil
		}
		if err := c.resolve(open, need); err != nil {
			return nil, err
		}
		slices.SortFunc(conflicts, func(a, b [2]uint32) int { return int(a[1]) - int(b[1]) })
		for _, cf := range conflicts {
			a, b := need[cf[0]], need[cf[1]]
			if a.UUID != b.UUID {
				c.collision(-1, a.UUID, b.UUID)
				continue
			}
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagConflictingParent,
				Message: "Duplicate transcript record fragments disagree on parentUuid.", AffectsCompleteness: true,
				RecordIndex: int(cf[1]), RecordID: b.UUID, Path: "parentUuid"})
		}
		if gapChild >= 0 {
			r := need[entries[gapChild].ord]
			c.Gaps = append(c.Gaps, Gap{ChildUUID: r.UUID, MissingParentUUID: r.ParentUUID})
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagHistoryGap,
				Message: "The active transcript chain is missing a parent record.", AffectsCompleteness: true,
				RecordIndex: -1, RecordID: r.UUID})
		}
		if cycleAt >= 0 {
			r := need[entries[cycleAt].ord]
			first := need[entries[chain[0]].ord]
			if first.ParentUUID != r.UUID {
				c.collision(-1, first.ParentUUID, r.UUID)
			}
			c.Cycle = r.UUID
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagParentCycle,
				Message: "The active transcript chain contains a parent cycle.", AffectsCompleteness: true,
				RecordIndex: -1, RecordID: r.UUID})
		}
	}
	return c, nil
}

func (c *Chain) collision(idx int, a, b string) {
	c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagHashCollision,
		Message:             fmt.Sprintf("uuids %q and %q share an index hash; the chain cannot be trusted.", a, b),
		AffectsCompleteness: true, RecordIndex: idx, RecordID: b})
}

// resolve reads the records of the given object indexes (identity only).
func (c *Chain) resolve(open func() (io.ReadCloser, error), need map[uint32]*Record) error {
	p := getParser(DecodeOptions{}, true)
	defer putParser(p)
	res := &p.res
	ord := uint32(0)
	err := readLines(open, c.opts.MaxLineBytes, func(line events.Line) error {
		if line.TooLong {
			return nil
		}
		p.decodeLine(line.Bytes, res)
		for i := range res.recs {
			if _, ok := need[ord]; ok {
				id := &res.recs[i].id
				need[ord] = &Record{UUID: string(id.uuid), ParentUUID: string(id.parent)}
			}
			ord++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for o, r := range need {
		if r == nil {
			return fmt.Errorf("qwen: record #%d: %w", o, ErrChanged)
		}
	}
	return nil
}

var errStop = errors.New("stop")

// readLines opens the transcript and feeds each physical line to f.
func readLines(open func() (io.ReadCloser, error), max int, f func(events.Line) error) error {
	rc, err := open()
	if err != nil {
		return fmt.Errorf("qwen: open transcript: %w", err)
	}
	defer rc.Close()
	for line, err := range events.Lines(rc, max) {
		if err != nil {
			return fmt.Errorf("qwen: read transcript: %w", err)
		}
		if err := f(line); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
	return nil
}

// Walk is pass 2: it calls fn with each active-chain record in chain order
// (fragments aggregated), i from 0 to Len-1. Every link is checked against
// the real uuid strings; a mismatch (a hash collision) appends a
// DiagHashCollision diagnostic and returns ErrHashCollision before any
// record past the mismatch is emitted.
func (c *Chain) Walk(open func() (io.ReadCloser, error), fn func(i int, ev events.Event) error) error {
	if c.Len == 0 {
		return nil
	}
	if len(c.want) == 0 {
		return errors.New("qwen: Walk needs a chain built by LoadChain")
	}
	p := getParser(c.opts.Decode, false)
	defer putParser(p)
	res := &p.res
	var (
		ord    uint32
		wi     int
		prev   string // uuid of the last emitted record (streaming)
		frags  [][]events.Event
		fnErr  error
		linkOK = func(k int, r *Record) error {
			if k > 0 && r.ParentUUID != prev {
				c.collision(-1, r.ParentUUID, prev)
				return fmt.Errorf("qwen: chain link %d: %w", k, ErrHashCollision)
			}
			if k == c.Len-1 && r.UUID != c.LeafUUID {
				c.collision(-1, r.UUID, c.LeafUUID)
				return fmt.Errorf("qwen: chain leaf: %w", ErrHashCollision)
			}
			prev = r.UUID
			return nil
		}
	)
	if !c.Streaming {
		frags = make([][]events.Event, c.Len)
	}
	p.selective = true
	err := readLines(open, c.opts.MaxLineBytes, func(line events.Line) error {
		if line.TooLong {
			return nil
		}
		p.wanted, p.lineOrd = c.want[wi:], ord
		p.decodeLine(line.Bytes, res)
		for i := range res.recs {
			pr := &res.recs[i]
			o := ord
			ord++
			for wi < len(c.want) && c.want[wi].ord == o {
				w := c.want[wi]
				wi++
				if code, _ := identityProblem(pr); code != "" {
					return fmt.Errorf("qwen: record #%d: %w", o, ErrChanged)
				}
				pos := events.Position{Line: line.Pos.Line, Offset: line.Pos.Offset + int64(pr.start)}
				ev := Envelope(pr.rec, pos)
				if !c.Streaming {
					frags[w.pos] = append(frags[w.pos], ev)
					continue
				}
				if err := linkOK(int(w.pos), pr.rec); err != nil {
					return err
				}
				if fnErr = fn(int(w.pos), ev); fnErr != nil {
					return errStop
				}
			}
		}
		if wi == len(c.want) {
			return errStop
		}
		return nil
	})
	if err != nil {
		return err
	}
	if fnErr != nil {
		return fnErr
	}
	if wi < len(c.want) {
		return fmt.Errorf("qwen: %d chain records not found: %w", len(c.want)-wi, ErrChanged)
	}
	if c.Streaming {
		return nil
	}
	for k, fs := range frags {
		rec := aggregate(fs)
		for _, f := range fs[1:] {
			if u := f.Body.(*Record).UUID; u != rec.UUID {
				c.collision(-1, u, rec.UUID)
				return fmt.Errorf("qwen: chain record %d: %w", k, ErrHashCollision)
			}
		}
		if err := linkOK(k, rec); err != nil {
			return err
		}
		ev := Envelope(rec, fs[0].Pos)
		if err := fn(k, ev); err != nil {
			return err
		}
		frags[k] = nil
	}
	return nil
}

// aggregate is aggregateTranscriptRecordFragments: the first fragment's
// fields, every fragment's message parts concatenated (role from the first
// message), and the greatest valid timestamp (JavaScript string order).
func aggregate(fs []events.Event) *Record {
	first := fs[0].Body.(*Record)
	base := *first
	var msg *Content
	if first.Message != nil {
		msg = &Content{Role: first.Message.Role, Parts: append([]Part{}, first.Message.Parts...)}
	}
	for _, f := range fs[1:] {
		r := f.Body.(*Record)
		if r.Message != nil {
			if msg != nil {
				msg = &Content{Role: msg.Role, Parts: append(msg.Parts, r.Message.Parts...)}
			} else {
				msg = &Content{Role: r.Message.Role, Parts: append([]Part{}, r.Message.Parts...)}
			}
		}
		if r.TimeOK && (!base.TimeOK || jsLess(base.Timestamp, r.Timestamp)) {
			base.Timestamp, base.TimeMs, base.TimeOK = r.Timestamp, r.TimeMs, true
		}
	}
	base.Message = msg
	return &base
}

// jsLess compares strings by UTF-16 code units, as JavaScript's < does.
func jsLess(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return ua < ub
			}
			return ra < rb // same high surrogate: the low surrogates order as the runes
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b != ""
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// ChainOf rebuilds the active chain from already decoded transcript events
// (bodies *Record) in memory, by the same rules as LoadChain and Walk, and
// returns it with its Chain summary (whose Walk is not usable: the events
// are already in hand). It is for tests and small inputs. Events with other
// bodies are ignored; RecordIndex in its diagnostics is the event index.
func ChainOf(evs []events.Event) ([]events.Event, *Chain, error) {
	c := &Chain{Streaming: false}
	type item struct {
		ev  events.Event
		rec *Record
		idx int
	}
	var items []item
	for i, ev := range evs {
		r, ok := ev.Body.(*Record)
		if !ok {
			continue
		}
		c.Objects++
		c.Records++
		if c.Records == 1 {
			c.SessionID = r.SessionID
			c.HasFirst, c.FirstSessionID, c.FirstCwd, c.FirstTS = true, r.SessionID, r.Cwd, r.Timestamp
		} else if r.SessionID != c.SessionID {
			return nil, nil, fmt.Errorf("qwen: %s: %w: %q and %q", ev.Pos, ErrMixedSessionIDs, c.SessionID, r.SessionID)
		}
		items = append(items, item{ev, r, i})
	}
	leaf := ""
	for i := len(items) - 1; i >= 0; i-- {
		if isConversation(items[i].rec) {
			leaf = items[i].rec.UUID
			break
		}
	}
	if leaf == "" {
		if c.Records > 0 {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagArtifactOnly,
				Message: "The input contains no conversation records.", RecordIndex: -1})
		}
		return nil, c, nil
	}
	c.LeafUUID = leaf
	frags := map[string][]events.Event{}
	for _, it := range items {
		if !isConversation(it.rec) {
			continue
		}
		if f, ok := frags[it.rec.UUID]; ok && !sameParent(f[0].Body.(*Record), it.rec) {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagConflictingParent,
				Message: "Duplicate transcript record fragments disagree on parentUuid.", AffectsCompleteness: true,
				RecordIndex: it.idx, RecordID: it.rec.UUID, Path: "parentUuid"})
		}
		frags[it.rec.UUID] = append(frags[it.rec.UUID], it.ev)
	}
	var uuids []string
	visited := map[string]bool{}
	for cur := leaf; cur != ""; {
		if visited[cur] {
			c.Cycle = cur
			break
		}
		visited[cur] = true
		uuids = append(uuids, cur)
		parent := frags[cur][0].Body.(*Record).ParentUUID
		if parent == "" {
			break
		}
		if _, ok := frags[parent]; !ok {
			c.Gaps = append(c.Gaps, Gap{ChildUUID: cur, MissingParentUUID: parent})
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagHistoryGap,
				Message: "The active transcript chain is missing a parent record.", AffectsCompleteness: true,
				RecordIndex: -1, RecordID: cur})
			break
		}
		cur = parent
	}
	if c.Cycle != "" {
		c.Diagnostics = append(c.Diagnostics, Diagnostic{Code: DiagParentCycle,
			Message: "The active transcript chain contains a parent cycle.", AffectsCompleteness: true,
			RecordIndex: -1, RecordID: c.Cycle})
	}
	slices.Reverse(uuids)
	out := make([]events.Event, 0, len(uuids))
	for _, u := range uuids {
		fs := frags[u]
		out = append(out, Envelope(aggregate(fs), fs[0].Pos))
	}
	c.Len = len(out)
	return out, c, nil
}

func sameParent(a, b *Record) bool {
	return a.ParentUUID == b.ParentUUID && a.ParentNull == b.ParentNull
}
