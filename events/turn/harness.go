package turn

import (
	"errors"
	"io"
	"iter"

	"github.com/tailproof/tailproof/events"
)

// Mapper maps a harness's native decoded events onto acts. Map appends the
// acts of ev to dst and returns it; an event may map to none. A mapper keeps
// no state between events: everything that needs order (which turn is open,
// which call was answered) is the fold's job, so every harness gets the same
// rules. The one exception is a FileMapper.
type Mapper interface {
	Map(dst []Act, ev events.Event) []Act
}

// FileMapper is a Mapper that reads one record in the light of the records
// before it in the same file, when a harness's record means something only
// in that light (Claude Code's Stop hooks summary says the turn ended only
// when nothing but hook bookkeeping came after the model's last response).
// ForFile returns a fresh mapper for one file: Read and every other reader
// of a whole file call it once per file (MapperFor), so a Harness value
// stays safe to share. Map on the FileMapper itself must still be right for
// a record read alone — failing closed where the earlier records decide.
type FileMapper interface {
	Mapper
	ForFile() Mapper
}

// MapperFor returns the mapper to read one file of h with.
func MapperFor(h Harness) Mapper {
	if fm, ok := h.Mapper.(FileMapper); ok {
		return fm.ForFile()
	}
	return h.Mapper
}

// MapperFunc adapts a function to a Mapper.
type MapperFunc func(dst []Act, ev events.Event) []Act

func (f MapperFunc) Map(dst []Act, ev events.Event) []Act { return f(dst, ev) }

// Harness is everything tailproof needs to read one harness's session files:
// its codec (bytes to native events), its mapper (native events to acts) and
// the framing options of its files. A harness author builds one of these for
// a new format; nothing in tailproof has to change.
type Harness struct {
	Name    string
	Codec   events.Codec
	Mapper  Mapper
	Options events.Options
}

// Unterminated reports whether a torn-tail error is a final segment
// without a newline — a fragment that was never written whole. events.Decode
// also classifies as torn tail a final line that ends in a newline but does
// not decode, and every bad line between it and the end; such a line was
// written whole (a splice, garbage), and its bytes may have held records.
func Unterminated(e *events.Error) bool {
	return errors.Is(e, events.ErrTornTail) && e.Unterminated
}

// Read streams the acts of the session file r. Lines that do not decode are
// not dropped: each becomes a KindDamage act at its position, classified torn
// tail, corrupt or too long by events.Decode, so the fold can tell a turn
// whose evidence is intact from one whose evidence is not. Only a read error
// of r itself ends the sequence with an error.
func Read(r io.Reader, h Harness) iter.Seq2[Act, error] {
	return func(yield func(Act, error) bool) {
		var buf []Act
		m := MapperFor(h)
		for ev, err := range events.Decode(r, h.Codec, h.Options) {
			if err != nil {
				var de *events.Error
				if !errors.As(err, &de) {
					yield(Act{}, err)
					return
				}
				if !yield(Act{Kind: KindDamage, Pos: de.Pos, Damage: de, Torn: Unterminated(de)}, nil) {
					return
				}
				continue
			}
			buf = m.Map(buf[:0], ev)
			for _, a := range buf {
				if !yield(a, nil) {
					return
				}
			}
		}
	}
}
