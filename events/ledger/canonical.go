package ledger

// This file is Decode's fast path for the canonical line: the bytes Encode
// (and Qwen Code 0.24.4's writer, JSON.stringify of the coerced record)
// writes for a record whose strings are printable ASCII without a quote or a
// backslash, with an integer time of at most 15 digits — every line tailproof
// and Qwen Code write for their own prompt ids. Such a line is valid JSON
// with no duplicate key, no escape and no whitespace, so the general reader
// (scanObject and the acceptance rules) would read the same record from it;
// TestCanonicalEqualsGeneral and FuzzCanonical hold the two together, and
// hold the fast path to encoding/json (decodeOracle). Any other line —
// another key order, a space, an escape, a fraction, a negative time — is
// not canonical and goes to the general reader, which decides it as before.
// The general reader cost ~2,900 instructions per canonical line (callgrind,
// a 100 MB reconcile's 19,643 ledger records): it validates each key and
// value as encoding/json does, the fast path compares the fixed bytes.

const (
	canonStart    = `{"v":1,"promptId":"`
	canonInFlight = `,"state":"in_flight"`
	canonTail     = `,"tailUuid":"`
	canonTerminal = `,"terminal":"`
	canonCode     = `,"code":"`
	canonStop     = `,"stopReason":"`
	canonAt       = `,"at":`
)

// hasAt reports whether line[i:] starts with s.
func hasAt(line []byte, i int, s string) bool {
	return len(line)-i >= len(s) && string(line[i:i+len(s)]) == s
}

// plainEnd returns the index of the quote that ends the plain string whose
// content starts at line[i], or -1 when a byte before the quote is not
// printable ASCII other than a backslash (or no quote follows).
func plainEnd(line []byte, i int) int {
	for ; i < len(line); i++ {
		c := line[i]
		if c == '"' {
			return i
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return -1
		}
	}
	return -1
}

// decodeCanonical is Decode of a canonical line; ok is false for any other
// line, which may still be a valid record (the general reader decides).
func decodeCanonical(line []byte) (r Record, ok bool) {
	if !hasAt(line, 0, canonStart) {
		return Record{}, false
	}
	idStart := len(canonStart)
	idEnd := plainEnd(line, idStart)
	if idEnd < 0 {
		return Record{}, false
	}
	i := idEnd + 1
	// The kept strings' spans in line, [start, end); 0, 0 when absent.
	var aStart, aEnd, bStart, bEnd int
	switch {
	case hasAt(line, i, canonInFlight):
		r.InFlight = true
		i += len(canonInFlight)
		if hasAt(line, i, canonTail) {
			aStart = i + len(canonTail)
			if aEnd = plainEnd(line, aStart); aEnd < 0 {
				return Record{}, false
			}
			i = aEnd + 1
		}
	case hasAt(line, i, canonTerminal):
		ts := i + len(canonTerminal)
		te := plainEnd(line, ts)
		if te < 0 {
			return Record{}, false
		}
		switch TerminalState(line[ts:te]) {
		case Completed:
			r.Terminal = Completed
		case Cancelled:
			r.Terminal = Cancelled
		case Error:
			r.Terminal = Error
		case Interrupted:
			r.Terminal = Interrupted
		default:
			return Record{}, false
		}
		i = te + 1
		if hasAt(line, i, canonCode) {
			aStart = i + len(canonCode)
			if aEnd = plainEnd(line, aStart); aEnd < 0 {
				return Record{}, false
			}
			r.HasCode = true
			i = aEnd + 1
		}
		if hasAt(line, i, canonStop) {
			bStart = i + len(canonStop)
			if bEnd = plainEnd(line, bStart); bEnd < 0 {
				return Record{}, false
			}
			r.HasStopReason = true
			i = bEnd + 1
		}
	default:
		return Record{}, false
	}
	if !hasAt(line, i, canonAt) {
		return Record{}, false
	}
	i += len(canonAt)
	// 1 to 15 digits, no leading zero but a lone one, then the closing brace
	// as the line's last byte: below 2^53, so At is exact.
	digits := len(line) - 1 - i
	if digits < 1 || digits > 15 || line[len(line)-1] != '}' || (line[i] == '0' && digits > 1) {
		return Record{}, false
	}
	var at int64
	for _, c := range line[i : len(line)-1] {
		if c < '0' || c > '9' {
			return Record{}, false
		}
		at = at*10 + int64(c-'0')
	}
	r.V, r.At = 1, at
	// One allocation for the kept strings, as the general reader makes.
	var stack [128]byte
	b := append(stack[:0], line[idStart:idEnd]...)
	b = append(b, line[aStart:aEnd]...)
	b = append(b, line[bStart:bEnd]...)
	s := string(b)
	n, na := idEnd-idStart, aEnd-aStart
	r.PromptID = s[:n]
	if r.InFlight {
		r.TailUUID = s[n : n+na]
	} else {
		r.Code = s[n : n+na]
		r.StopReason = s[n+na:]
	}
	return r, true
}
