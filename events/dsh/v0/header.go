package v0

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tailproof/tailproof/events"
)

// FormatVersion is dsh-session 0.1.0-rc.8's SESSION_FORMAT_VERSION.
const FormatVersion = 0

// ErrUnsupportedVersion classifies a header whose numeric version is not
// FormatVersion: dsh refuses it before any structural check ("upgrade the
// harness", never "corrupt").
var ErrUnsupportedVersion = errors.New("v0: unsupported session format version")

// Header is the first logical line of a v0 log (dsh-session-persistence-jsonl
// 0.1.0-rc.8 toHeaderLine / isHeaderLine / fromHeaderLine). Optional fields
// are nil when absent; their raw JSON is kept so AppendHeader writes them back
// unchanged.
type Header struct {
	Version         float64
	ID              string
	CreatedAt       int64
	Cwd             []byte // raw; nil when absent (not type-checked by the header guard)
	ParentSession   []byte
	SeedLength      []byte
	Origin          []byte // absent or "subagent"
	DelegationDepth int64
	AgentPreset     []byte // absent or a string
}

// CwdString returns the cwd when it is a JSON string.
func (h Header) CwdString() (string, bool) {
	if h.Cwd == nil {
		return "", false
	}
	return str(h.Cwd)
}

// ParseHeader checks the header line (without its newline) in dsh's order:
// not JSON → corrupt; an object with a numeric version other than 0 →
// ErrUnsupportedVersion; not a well-formed header (type 'session', number
// version, string id, createdAt and delegationDepth non-negative safe
// integers, origin absent or 'subagent', agentPreset absent or a string) →
// corrupt; a retired policy field (sandboxMode, approvalPolicy) → corrupt.
func ParseHeader(line []byte) (Header, error) {
	var scratch [12]member
	ms, isObj, err := object(scratch[:0], line)
	if err != nil {
		return Header{}, fmt.Errorf("v0: %w: header line is not valid JSON", events.ErrCorrupt)
	}
	if !isObj {
		return Header{}, fmt.Errorf("v0: %w: first line is not a session header", events.ErrCorrupt)
	}
	var h Header
	vraw, hasV := last(ms, "version")
	v, isNum := number(vraw)
	if hasV && isNum && v != FormatVersion {
		id := "?"
		if raw, ok := last(ms, "id"); ok {
			if s, ok := str(raw); ok {
				id = s
			} else {
				id = string(raw)
			}
		}
		return Header{}, fmt.Errorf("%w: session %q uses log format v%s, this reader reads only v%d", ErrUnsupportedVersion, id, strconv.FormatFloat(v, 'g', -1, 64), FormatVersion)
	}
	notHeader := fmt.Errorf("v0: %w: first line is not a session header", events.ErrCorrupt)
	if t, ok := last(ms, "type"); !ok || string(t) != `"session"` {
		if s, isStr := str(t); !isStr || s != "session" {
			return Header{}, notHeader
		}
	}
	if !hasV || !isNum {
		return Header{}, notHeader
	}
	h.Version = v
	idRaw, _ := last(ms, "id")
	if h.ID, isNum = str(idRaw); !isNum {
		return Header{}, notHeader
	}
	cRaw, _ := last(ms, "createdAt")
	var ok bool
	if h.CreatedAt, ok = nonNegativeSafe(cRaw); !ok {
		return Header{}, notHeader
	}
	dRaw, _ := last(ms, "delegationDepth")
	if h.DelegationDepth, ok = nonNegativeSafe(dRaw); !ok {
		return Header{}, fmt.Errorf("v0: %w: first line is not a session header (delegationDepth is required, a non-negative safe integer)", events.ErrCorrupt)
	}
	if o, has := last(ms, "origin"); has {
		if s, isStr := str(o); !isStr || s != "subagent" {
			return Header{}, notHeader
		}
		h.Origin = o
	}
	if a, has := last(ms, "agentPreset"); has {
		if _, isStr := str(a); !isStr {
			return Header{}, notHeader
		}
		h.AgentPreset = a
	}
	for _, retired := range []string{"sandboxMode", "approvalPolicy"} {
		if _, has := last(ms, retired); has {
			return Header{}, fmt.Errorf("v0: %w: session header uses retired policy baseline fields", events.ErrCorrupt)
		}
	}
	h.Cwd = cloneRaw(ms, "cwd")
	h.ParentSession = cloneRaw(ms, "parentSession")
	h.SeedLength = cloneRaw(ms, "seedLength")
	h.Origin = cloneBytes(h.Origin)
	h.AgentPreset = cloneBytes(h.AgentPreset)
	return h, nil
}

// Validate is the check dsh's Session.fromRestore applies to a loaded header
// (validateSessionHeader): the id matches, cwd is an absolute path string,
// parentSession a string, seedLength a non-negative safe integer.
func (h Header) Validate(id string) error {
	if h.ID != id {
		return fmt.Errorf("v0: %w: session header id %q does not match session id %q", events.ErrCorrupt, h.ID, id)
	}
	if h.Cwd != nil {
		cwd, ok := str(h.Cwd)
		if !ok {
			return fmt.Errorf("v0: %w: session header cwd must be a string", events.ErrCorrupt)
		}
		if len(cwd) == 0 || cwd[0] != '/' {
			return fmt.Errorf("v0: %w: session header cwd must be an absolute path, got %q", events.ErrCorrupt, cwd)
		}
	}
	if h.ParentSession != nil {
		if _, ok := str(h.ParentSession); !ok {
			return fmt.Errorf("v0: %w: session header parentSession must be a string", events.ErrCorrupt)
		}
	}
	if h.SeedLength != nil {
		if _, ok := nonNegativeSafe(h.SeedLength); !ok {
			return fmt.Errorf("v0: %w: session header seedLength must be a non-negative safe integer", events.ErrCorrupt)
		}
	}
	return nil
}

func cloneRaw(ms []member, key string) []byte {
	v, ok := last(ms, key)
	if !ok {
		return nil
	}
	return cloneBytes(v)
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// AppendHeader appends h as toHeaderLine writes it: type, version, id,
// createdAt, cwd?, parentSession?, seedLength?, origin?, delegationDepth,
// agentPreset? (no newline).
func AppendHeader(dst []byte, h Header) []byte {
	dst = append(dst, `{"type":"session","version":`...)
	dst = strconv.AppendFloat(dst, h.Version, 'g', -1, 64)
	dst = append(dst, `,"id":`...)
	dst = events.AppendJSString(dst, h.ID)
	dst = append(dst, `,"createdAt":`...)
	dst = strconv.AppendInt(dst, h.CreatedAt, 10)
	for _, f := range []struct {
		k string
		v []byte
	}{{"cwd", h.Cwd}, {"parentSession", h.ParentSession}, {"seedLength", h.SeedLength}, {"origin", h.Origin}} {
		if f.v != nil {
			dst = append(dst, `,"`+f.k+`":`...)
			dst = append(dst, f.v...)
		}
	}
	dst = append(dst, `,"delegationDepth":`...)
	dst = strconv.AppendInt(dst, h.DelegationDepth, 10)
	if h.AgentPreset != nil {
		dst = append(dst, `,"agentPreset":`...)
		dst = append(dst, h.AgentPreset...)
	}
	return append(dst, '}')
}
