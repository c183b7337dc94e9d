package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// scalarString is the specification String is held to: the string at b[i]
// read one byte at a time, with String's results and errors.
func scalarString(b []byte, i int) (end int, escaped, nonASCII bool, err error) {
	for i++; ; {
		if i >= len(b) {
			return 0, false, false, errAt(b, i, "")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, nonASCII, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false, errAt(b, i+1, "")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) || hexVal(b[k]) < 0 {
						return 0, false, false, errAt(b, k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return 0, false, false, errAt(b, i+1, "in string escape code")
			}
		case c < 0x20:
			return 0, false, false, errAt(b, i, "in string literal")
		default:
			nonASCII = nonASCII || c >= 0x80
			i++
		}
	}
}

// checkString: String, by the vector block skipper and by the word one,
// and scalarString agree on the string at data[0],
// ShortString with both where it answers,
// and on the string at every offset of it that holds a quote (so that the
// same bytes start at every alignment).
func checkString(t *testing.T, data []byte) {
	t.Helper()
	for i := range data {
		if data[i] != '"' {
			continue
		}
		wend, wesc, wna, werr := scalarString(data, i)
		for _, vector := range []bool{false, true} {
			end, esc, na, err := stringWith(vector, data, i)
			if end != wend || esc != wesc || na != wna || !reflect.DeepEqual(err, werr) {
				t.Fatalf("String(%q, %d) (vector blocks %v) = %d, %v, %v, %v; scalar %d, %v, %v, %v",
					data, i, vector, end, esc, na, err, wend, wesc, wna, werr)
			}
		}
		if send, ok := ShortString(data, i); ok && (werr != nil || send != wend || wesc || send-i-2 >= 8) {
			t.Fatalf("ShortString(%q, %d) = %d; scalar %d, %v, %v", data, i, send, wend, wesc, werr)
		}
	}
}

// stringPieces cut strings at every kind of place: runs of backslashes
// across block boundaries, \u escapes (valid and not, at the input's end),
// control bytes, invalid escapes, quotes escaped or not, non-ASCII bytes.
var stringPieces = []string{`a`, `bc`, ` `, `\n`, `\t`, `\"`, `\\`, `\\\\`, `\\\"`, `\/`, `\u001b`, `\uD83D\uDE00`,
	`\u12`, `\x`, "\x01", "\t", "\n", `"`, `é`, "\xff", "\x7f", strings.Repeat("x", 63), strings.Repeat(`\\`, 33),
	strings.Repeat(`\`, 65), `\u`, `\`}

func TestStringDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 30000 {
		var b bytes.Buffer
		b.WriteByte('"')
		for n := r.IntN(90); n > 0; n-- {
			b.WriteString(stringPieces[r.IntN(len(stringPieces))])
		}
		if r.IntN(4) > 0 {
			b.WriteByte('"')
		}
		if r.IntN(2) > 0 {
			b.WriteString(`,"next":1}`)
		}
		checkString(t, b.Bytes())
	}
}

// Every position of a block for a quote, a backslash pair, a control
// byte, an invalid escape, a \u escape and a non-ASCII byte, after a
// backslash that sends String to the block skipper.
func TestStringEveryPosition(t *testing.T) {
	for _, mark := range []string{`"`, `\\`, `\"`, "\x1f", `\q`, `\u00e9`, `\u00g9`, "\xc3\xa9", `\`} {
		for pad := range 140 {
			for _, tail := range []string{`"`, `", "k": 1}` + strings.Repeat(" ", 70)} {
				s := `"x\n` + strings.Repeat("a", pad) + mark + strings.Repeat("b", 70) + tail
				checkString(t, []byte(s))
				checkString(t, []byte(s[:len(s)-len(tail)]))
			}
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add([]byte(`"` + strings.Repeat(`ab\"c\\d\n`, 20) + `"`))
	f.Add([]byte(`"\n` + strings.Repeat("x", 61) + `\` + `"` + strings.Repeat("y", 70) + `"`))
	f.Add([]byte(`"\t` + strings.Repeat(`\\`, 40) + `\u00e9` + strings.Repeat("z", 64) + `"`))
	f.Add([]byte(`"\t` + strings.Repeat("é", 40) + "\x01" + strings.Repeat("z", 64) + `"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkString(t, append([]byte{'"'}, data...))
	})
}

// seqEscaped is EscapedBits one byte at a time.
func seqEscaped(bs, carry uint64) (escaped, next uint64) {
	esc := carry == 1
	for i := range 64 {
		if esc {
			escaped |= 1 << i
			esc = false
			continue
		}
		if bs>>i&1 == 1 {
			esc = true
		}
	}
	if esc {
		next = 1
	}
	return escaped, next
}

// EscapedBits against the sequential rule: every pattern of the low 16
// bits and of the 16 bits around the block's end, with both carries, and
// random blocks of every density.
func TestEscapedBits(t *testing.T) {
	check := func(bs, carry uint64) {
		e, n := EscapedBits(bs, carry)
		we, wn := seqEscaped(bs, carry)
		if e != we || n != wn {
			t.Fatalf("EscapedBits(%064b, %d) = %064b, %d; want %064b, %d", bs, carry, e, n, we, wn)
		}
	}
	for p := range uint64(1 << 16) {
		for carry := range uint64(2) {
			check(p, carry)
			check(p<<48, carry)
			check(p<<24|0xf, carry)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 18 {
		bs := r.Uint64()
		for range r.IntN(4) {
			bs &= r.Uint64() // sparser
		}
		for range r.IntN(3) {
			bs |= r.Uint64() // denser: long runs
		}
		check(bs, uint64(r.IntN(2)))
	}
}

// zeroBytes, belowQuote and packHigh against a byte loop: every byte value at every
// position among random neighbours, including the zero bytes whose borrow
// fools the classic haszero test.
func TestZeroBytesPack(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	check := func(w uint64) {
		var want uint64
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], w)
		for k, c := range buf {
			if c == 0 {
				want |= 1 << k
			}
		}
		if got := packHigh(zeroBytes(w)); got != want {
			t.Fatalf("packHigh(zeroBytes(%#016x)) = %08b, want %08b", w, got, want)
		}
		var wantStop uint64
		for k, c := range buf {
			if c < 0x20 || c == '"' {
				wantStop |= 1 << k
			}
		}
		if got := packHigh(belowQuote(w)); got != wantStop {
			t.Fatalf("packHigh(belowQuote(%#016x)) = %08b, want %08b", w, got, wantStop)
		}
	}
	for pos := range 8 {
		for c := range uint64(256) {
			for range 16 {
				w := r.Uint64()
				if r.IntN(2) == 0 {
					w &= r.Uint64() & r.Uint64() // more zero bytes
				}
				check(w&^(0xff<<(8*pos)) | c<<(8*pos))
			}
		}
	}
}
