package dsh

import "encoding/json"

// fastParseRecord is ParseRecord for input the scanner decodes exactly,
// except that the record's data is a subslice of line; ok is false when the
// encoding/json path must decide.
func fastParseRecord(line []byte) (Record, bool) {
	s := scanner{b: line}
	if s.peek() != '{' {
		return Record{}, false
	}
	s.i++
	var (
		r             Record
		set           uint32
		seq, tm       []byte
		seqInt, tmInt bool
	)
	for first := true; ; {
		k := s.member(&first)
		if k == nil {
			break
		}
		switch string(k) {
		case "type":
			s.seen(&set, 1)
			if s.null() {
				s.fail() // no type
			}
			r.Type = s.str()
		case "seq":
			s.seen(&set, 2)
			if c := s.peek(); c != '-' && (c < '0' || c > '9') {
				s.fail() // null, or a string json.Number accepts
			}
			seq, seqInt = s.number()
		case "time":
			s.seen(&set, 4)
			if c := s.peek(); c != '-' && (c < '0' || c > '9') {
				s.fail()
			}
			tm, tmInt = s.number()
		case "data":
			s.seen(&set, 8)
			s.ws()
			start := s.i
			s.skip(1)
			if !s.bad {
				r.Data = s.b[start:s.i]
			}
		default:
			s.unknown(k, 1, "type", "seq", "time", "data")
		}
	}
	s.end()
	if s.bad || set != 15 || r.Type == "" {
		return Record{}, false
	}
	var ok bool
	if r.Seq, ok = wholeLiteral(seq, seqInt); !ok || r.Seq < 0 {
		return Record{}, false
	}
	if r.Time, ok = wholeLiteral(tm, tmInt); !ok {
		return Record{}, false
	}
	return r, true
}

// wholeLiteral is wholeNumber over a validated number literal.
func wholeLiteral(lit []byte, integer bool) (int64, bool) {
	if integer {
		if n, ok := parseInt(lit); ok {
			return n, true
		}
	}
	return wholeNumber(json.Number(lit))
}

// appendCompact is json.Compact for input the scanner validates (one value,
// optional surrounding whitespace): data appended to dst with the whitespace
// outside strings dropped. ok is false, and dst unchanged, when encoding/json
// must decide.
func appendCompact(dst, data []byte) ([]byte, bool) {
	s := scanner{b: data}
	s.skip(0)
	s.end()
	if s.bad {
		return dst, false
	}
	start, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString:
			if c == '\\' {
				i++ // the escaped byte (perhaps a quote) never ends the string
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, data[start:i]...)
			start = i + 1
		}
	}
	return append(dst, data[start:]...), true
}

// numberLit scans a number value for a json.Number member; a string, which
// json.Number would also take, or null fails.
func (s *scanner) numberLit() []byte {
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		s.fail()
		return nil
	}
	lit, _ := s.number()
	return lit
}

// fastParseHeader is ParseHeader for input the scanner decodes exactly; ok
// is false when the encoding/json path must decide.
func fastParseHeader(line []byte) (Header, bool) {
	s := scanner{b: line}
	if s.peek() != '{' {
		return Header{}, false
	}
	s.i++
	var (
		h                Header
		set              uint32
		typ              string
		version, created []byte
	)
	for first := true; ; {
		k := s.member(&first)
		if k == nil {
			break
		}
		switch string(k) {
		case "type":
			s.seen(&set, 1)
			typ = s.str() // null fails: the guard wants the string "session"
		case "version":
			s.seen(&set, 2)
			version = s.numberLit()
		case "id":
			s.seen(&set, 4)
			h.ID = s.str()
		case "createdAt":
			s.seen(&set, 8)
			created = s.numberLit()
		case "cwd":
			s.optStrField(&h.Cwd, &set, 16)
		case "parentSession":
			s.optStrField(&h.ParentSession, &set, 32)
		default:
			s.unknown(k, 1, "type", "version", "id", "createdAt", "cwd", "parentSession")
		}
	}
	s.end()
	if s.bad || set&15 != 15 || typ != HeaderType {
		return Header{}, false
	}
	var err1, err2 error
	h.Version, err1 = json.Number(version).Float64()
	h.CreatedAt, err2 = json.Number(created).Float64()
	if err1 != nil || err2 != nil {
		return Header{}, false
	}
	return h, true
}

// fastParseSummary is ParseSummary for input the scanner decodes exactly;
// ok is false when the encoding/json path must decide.
func fastParseSummary(b []byte) (SummaryPatch, bool) {
	s := scanner{b: b}
	if s.peek() != '{' {
		return SummaryPatch{}, false
	}
	s.i++
	var (
		p   SummaryPatch
		set uint32
	)
	for first := true; ; {
		k := s.member(&first)
		if k == nil {
			break
		}
		switch string(k) {
		case "updatedAt":
			s.seen(&set, 1)
			if !s.null() {
				f, err := json.Number(s.numberLit()).Float64()
				if err != nil {
					s.fail()
				}
				p.UpdatedAt = &f
			}
		case "title":
			s.optStrField(&p.Title, &set, 2)
		case "firstPrompt":
			s.optStrField(&p.FirstPrompt, &set, 4)
		default:
			s.unknown(k, 1, "updatedAt", "title", "firstPrompt")
		}
	}
	s.end()
	if s.bad {
		return SummaryPatch{}, false
	}
	return p, true
}
