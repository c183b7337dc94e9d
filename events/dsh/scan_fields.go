package dsh

// seen fails on a repeated member: encoding/json merges a repeated object
// into the first and reuses a repeated array's elements, which the fast path
// does not reproduce.
func (s *scanner) seen(set *uint32, bit uint32) {
	if *set&bit != 0 {
		s.fail()
	}
	*set |= bit
}

// unknown skips the value of a member that names no field, failing when the
// key matches one case-insensitively (encoding/json would decode it).
func (s *scanner) unknown(key []byte, depth int, fields ...string) {
	for _, f := range fields {
		if asciiEqualFold(key, f) {
			s.fail()
			return
		}
	}
	s.skip(depth)
}

// asciiEqualFold is bytes.EqualFold for an ASCII key and field name.
func asciiEqualFold(key []byte, f string) bool {
	if len(key) != len(f) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], f[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

func (s *scanner) strField(dst *string, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		*dst = s.str()
	}
}

func (s *scanner) optStrField(dst **string, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		v := s.str()
		*dst = &v
	}
}

func (s *scanner) int64Value() int64 {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		s.fail()
		return 0
	}
	lit, integer := s.number()
	if s.bad || !integer {
		s.fail()
		return 0
	}
	n, ok := parseInt(lit)
	if !ok {
		s.fail()
	}
	return n
}

func (s *scanner) intField(dst *int64, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		*dst = s.int64Value()
	}
}

func (s *scanner) optIntField(dst **int64, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		v := s.int64Value()
		*dst = &v
	}
}

func (s *scanner) boolValue() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return true
	case 'f':
		s.literal("false")
		return false
	}
	s.fail()
	return false
}

func (s *scanner) boolField(dst *bool, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		*dst = s.boolValue()
	}
}

func (s *scanner) optBoolField(dst **bool, set *uint32, bit uint32) {
	s.seen(set, bit)
	if !s.null() {
		v := s.boolValue()
		*dst = &v
	}
}

// rawField is a json.RawMessage member: null is kept as the bytes "null".
func (s *scanner) rawField(dst *[]byte, set *uint32, bit uint32, depth int) {
	s.seen(set, bit)
	*dst = s.raw(depth)
}
