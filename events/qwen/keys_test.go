package qwen

import (
	"strings"
	"testing"
)

var allKeyTables = []struct {
	name  string
	t     *keyTable
	names []string
}{
	{"record", recordKeys, recordKeyNames[1:]},
	{"content", contentKeys, []string{"role", "parts"}},
	{"part", partKeys, []string{"text", "thought", "functionCall", "functionResponse", "inlineData", "fileData"}},
	{"call", callKeys, []string{"id", "name"}},
}

// Each table names its keys by their constants, and nothing else: no
// prefix, extension, other case or neighbour of a key.
func TestKeyTables(t *testing.T) {
	for _, tb := range allKeyTables {
		for i, k := range tb.names {
			if got := tb.t.find([]byte(k)); got != i+1 {
				t.Errorf("%s: find(%q) = %d, want %d", tb.name, k, got, i+1)
			}
			for _, other := range []string{k[:len(k)-1], k + "x", k + "\x00", "\x00" + k, strings.ToUpper(k[:1]) + k[1:],
				k[:len(k)-1] + string(k[len(k)-1]^1), string(k[0]^0x80) + k[1:], k + strings.Repeat("s", 16)} {
				if got := tb.t.find([]byte(other)); got != 0 && (got < 1 || tb.names[got-1] != other) {
					t.Errorf("%s: find(%q) = %d (%q)", tb.name, other, got, tb.names[got-1])
				}
			}
			// A decoded key may end in NULs (\u0000), which its words do not
			// show: only the length tells it apart.
			for n := len(k) + 1; n <= 16; n++ {
				other := k + strings.Repeat("\x00", n-len(k))
				if got := tb.t.find([]byte(other)); got != 0 {
					t.Errorf("%s: find(%q) = %d", tb.name, other, got)
				}
			}
		}
		for _, other := range []string{"", "model", "x", "parts", "uuid", "message", strings.Repeat("a", 16), strings.Repeat("a", 17)} {
			got := tb.t.find([]byte(other))
			want := 0
			for i, k := range tb.names {
				if k == other {
					want = i + 1
				}
			}
			if got != want {
				t.Errorf("%s: find(%q) = %d, want %d", tb.name, other, got, want)
			}
		}
	}
}

// checkKeyIn: keyIn reads the key at data[0] as key does, then looks its
// decoded bytes up: the same id, position, success and error.
func checkKeyIn(t *testing.T, tb *keyTable, data []byte) {
	t.Helper()
	var ref, got scanner
	ref.reset(data)
	k, wantOK := ref.key()
	want := 0
	if wantOK {
		want = tb.find(k)
	}
	got.reset(data)
	id, ok := got.keyIn(tb)
	if ok != wantOK || id != want || got.i != ref.i || (got.err == nil) != (ref.err == nil) || got.err != nil && *got.err != *ref.err {
		t.Fatalf("keyIn = %d, %v at %d (%v); key then find = %d, %v at %d (%v)\n%q", id, ok, got.i, got.err, want, wantOK, ref.i, ref.err, data)
	}
}

// TestKeyInMatchesKey: every table's keys and their neighbours, spelled
// plain and with escapes, followed by a colon, whitespace, no colon or the
// end of the input at every length.
func TestKeyInMatchesKey(t *testing.T) {
	var keys []string
	for _, tb := range allKeyTables {
		for _, k := range tb.names {
			keys = append(keys, k, k[:len(k)-1], k+"s", `\u00`+strings.ToLower(hex2(k[0]))+k[1:], k[:1]+`\/`+k[1:],
				"é"+k, k+"\x01", k+`\"`, k+`\\`, k+"\xff")
		}
	}
	keys = append(keys, "", "x", strings.Repeat("a", 15), strings.Repeat("a", 16), strings.Repeat("a", 17), `\`, `\u12`)
	tails := []string{`:1`, ` : 1`, ":", "", ` `, `,`, `x`, "\t:\n", `:"` + strings.Repeat("v", 20) + `"}`}
	for _, tb := range allKeyTables {
		for _, k := range keys {
			for _, tail := range tails {
				for _, closed := range []bool{true, false} {
					data := `"` + k
					if closed {
						data += `"`
					}
					data += tail
					for cut := len(data); cut >= 0 && cut >= len(data)-24; cut-- {
						checkKeyIn(t, tb.t, []byte(data[:cut]))
						checkKeyIn(t, tb.t, []byte(" "+data[:cut]))
					}
				}
			}
		}
	}
}

func hex2(c byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func FuzzKeyIn(f *testing.F) {
	f.Add(uint8(0), []byte(`"sessionId":"x"`))
	f.Add(uint8(2), []byte(`"functionResponse":{}`))
	f.Add(uint8(1), []byte(`"\u0072ole" :1`))
	f.Add(uint8(0), []byte(`"parentUuid`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		checkKeyIn(t, allKeyTables[int(which)%len(allKeyTables)].t, data)
	})
}
