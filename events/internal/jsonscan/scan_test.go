package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// decodeJSON is the specification: encoding/json's verdict on a whole
// document and, for a string, its value.
func decodeJSON(doc []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(doc, &s); err != nil {
		return "", json.Valid(doc)
	}
	return s, true
}

// unquote runs String and AppendUnquote over a whole quoted document.
func unquote(doc []byte) (string, bool) {
	if len(doc) == 0 || doc[0] != '"' {
		return "", false
	}
	end, escaped, nonASCII, err := String(doc, 0)
	if err != nil || end != len(doc) {
		return "", false
	}
	content := doc[1 : end-1]
	if !escaped && !nonASCII {
		return string(content), true
	}
	return string(AppendUnquote(nil, content)), true
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		in                string
		want              string
		ok                bool
		escaped, nonASCII bool
	}{
		{`"plain"`, "plain", true, false, false},
		{`""`, "", true, false, false},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true, true, false},
		{`"\u0041\u00e9"`, "Aé", true, true, false},
		{`"\ud83d\ude00"`, "\U0001F600", true, true, false},
		{`"\uD83D\uDE00"`, "\U0001F600", true, true, false},
		{`"\ud83d"`, "\uFFFD", true, true, false},
		{`"\ude00\ud83d"`, "\uFFFD\uFFFD", true, true, false},
		{`"\ud83d\u0041"`, "\uFFFDA", true, true, false},
		{`"\ud83d\ud83d\ude00"`, "\uFFFD\U0001F600", true, true, false},
		{`"\ud83dx\ude00"`, "\uFFFDx\uFFFD", true, true, false},
		{"\"\xff\xfe\"", "\uFFFD\uFFFD", true, false, true},
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD", true, false, true},
		{"\"\xe2\x82\"", "\uFFFD\uFFFD", true, false, true},
		{"\"h\xc3\xa9\"", "hé", true, false, true},
		{"\"a\x7fb\"", "a\x7fb", true, false, false},
		{`"\u12"`, "", false, false, false},
		{`"\u12g4"`, "", false, false, false},
		{`"\x"`, "", false, false, false},
		{`"\'"`, "", false, false, false},
		{"\"a\tb\"", "", false, false, false},
		{"\"a\x00\"", "", false, false, false},
		{`"unterminated`, "", false, false, false},
		{`"\`, "", false, false, false},
		{`"\u00`, "", false, false, false},
	} {
		got, ok := unquote([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("unquote(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if want, wantOK := decodeJSON([]byte(tc.in)); ok != wantOK || got != want {
			t.Errorf("unquote(%q) = %q, %v; encoding/json %q, %v", tc.in, got, ok, want, wantOK)
		}
		if tc.ok {
			_, escaped, nonASCII, _ := String([]byte(tc.in), 0)
			if escaped != tc.escaped || nonASCII != tc.nonASCII {
				t.Errorf("String(%q) escaped, nonASCII = %v, %v; want %v, %v", tc.in, escaped, nonASCII, tc.escaped, tc.nonASCII)
			}
		}
	}
}

// Every \u escape, alone and as each half of a pair, decodes as
// encoding/json decodes it.
func TestUnquoteEveryEscape(t *testing.T) {
	for r := range 0x10000 {
		for _, in := range []string{
			`"\u` + hex(r) + `"`,
			`"\ud83d\u` + hex(r) + `"`,
			`"\u` + hex(r) + `\ude00"`,
		} {
			got, ok := unquote([]byte(in))
			want, wantOK := decodeJSON([]byte(in))
			if ok != wantOK || got != want {
				t.Fatalf("unquote(%q) = %q, %v; encoding/json %q, %v", in, got, ok, want, wantOK)
			}
		}
	}
}

func hex(r int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}

func TestHex4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want rune
	}{
		{"0000", 0}, {"ffff", 0xFFFF}, {"FFFF", 0xFFFF}, {"D83d", 0xD83D}, {"12345", 0x1234},
		{"123", -1}, {"", -1}, {"12g4", -1}, {"-123", -1}, {"12 4", -1},
	} {
		if got := Hex4([]byte(tc.in)); got != tc.want {
			t.Errorf("Hex4(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

func TestSkipSpace(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i    int
		want int
	}{
		{"", 0, 0}, {" \t\r\nx", 0, 4}, {"x ", 0, 0}, {"x  ", 1, 3},
		{"\v", 0, 0}, {"\f", 0, 0}, {"\xef\xbb\xbf", 0, 0}, {"\u00a0", 0, 0},
	} {
		if got := SkipSpace([]byte(tc.in), tc.i); got != tc.want {
			t.Errorf("SkipSpace(%q, %d) = %d, want %d", tc.in, tc.i, got, tc.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		in      string
		end     int
		integer bool
	}{
		{"0", 1, true}, {"-0", 2, true}, {"123", 3, true}, {"-9007199254740993", 17, true},
		{"1.5", 3, false}, {"1e5", 3, false}, {"1E+5", 4, false}, {"-0.0e-0", 7, false},
		{"01", 1, true}, {"1.5.", 3, false}, {"12,", 2, true}, {"1e400", 5, false},
		{"-", -1, false}, {"-a", -1, false}, {"+1", -1, false}, {".5", -1, false},
		{"1.", -1, false}, {"1.e5", -1, false}, {"1e", -1, false}, {"1e+", -1, false},
		{"", -1, false}, {"x", -1, false},
	} {
		end, integer, err := Number([]byte(tc.in), 0)
		if tc.end < 0 {
			if err == nil {
				t.Errorf("Number(%q) = %d, want an error", tc.in, end)
			}
			continue
		}
		if err != nil || end != tc.end || integer != tc.integer {
			t.Errorf("Number(%q) = %d, %v, %v; want %d, %v", tc.in, end, integer, err, tc.end, tc.integer)
		}
	}
}

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		in, lit string
		ok      bool
	}{
		{"true", "true", true}, {"false", "false", true}, {"null", "null", true}, {"nullx", "null", true},
		{"tru", "true", false}, {"nul", "null", false}, {"nulL", "null", false}, {"", "null", false}, {"x", "true", false},
	} {
		end, err := Literal([]byte(tc.in), 0, tc.lit)
		if (err == nil) != tc.ok || (tc.ok && end != len(tc.lit)) {
			t.Errorf("Literal(%q, %q) = %d, %v; want ok %v", tc.in, tc.lit, end, err, tc.ok)
		}
	}
}

// valid is SkipValue's verdict on a whole document, as json.Valid judges it.
func valid(doc []byte, maxDepth int) bool {
	end, err := SkipValue(doc, SkipSpace(doc, 0), 0, maxDepth)
	return err == nil && SkipSpace(doc, end) == len(doc)
}

func TestSkipValue(t *testing.T) {
	for _, in := range []string{
		`{"a":[1,{"b":null}],"c":[]}`, `[[],{}]`, `{"a":[1,}]}`, `[1,]`, `{"a"}`, `{1:2}`, `[01]`,
		`[tru]`, `{"a":1]`, `[1}`, ` [ 1 , "a\u0041" , true , false , null ] `, `{ "a" : { } , "b" : [ ] }`,
		`{"\u0061":1}`, "{\"\xff\":1}", `"x"`, `-1.5e3`, `null`, ``, ` `, `[`, `{`, `{"a":`, `{"a"`, `[1`, `[1,`,
		`}`, `]`, `,`, `{,}`, `[,1]`, `{"a":1,}`, `{"a":1 "b":2}`, `[1 2]`, `"\u00"`, "[\"\x01\"]",
	} {
		if got, want := valid([]byte(in), MaxDepth), json.Valid([]byte(in)); got != want {
			t.Errorf("SkipValue(%q) valid = %v, encoding/json %v", in, got, want)
		}
	}
}

// The limit counts the containers around the value plus its own: depth
// containers already open leave maxDepth-depth levels.
func TestSkipValueDepth(t *testing.T) {
	nest := func(n int, open, closer string) []byte {
		return []byte(strings.Repeat(open, n) + "0" + strings.Repeat(closer, n))
	}
	for _, n := range []int{1, 32, 33, 255, 256, 257, MaxDepth - 1, MaxDepth, MaxDepth + 1} {
		for _, p := range [][2]string{{"[", "]"}, {`{"a":`, "}"}} {
			doc := nest(n, p[0], p[1])
			if got, want := valid(doc, MaxDepth), json.Valid(doc); got != want {
				t.Errorf("%d levels of %s: valid = %v, encoding/json %v", n, p[0], got, want)
			}
			for _, depth := range []int{0, 1, 5} {
				_, err := SkipValue(doc, 0, depth, 256)
				if (err == nil) != (depth+n <= 256) {
					t.Errorf("%d levels of %s within %d, limit 256: err = %v", n, p[0], depth, err)
				}
			}
		}
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := SkipValue([]byte(`[1,x]`), 0, 0, MaxDepth)
	se, ok := err.(*SyntaxError)
	if !ok || se.Offset != 3 || se.Char != 'x' || se.End || se.Context != "looking for beginning of value" {
		t.Fatalf("SkipValue([1,x]) err = %#v", err)
	}
	if want := `jsonscan: invalid character 'x' looking for beginning of value (offset 3)`; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	_, err = SkipValue([]byte(`[1,`), 0, 0, MaxDepth)
	if se, ok := err.(*SyntaxError); !ok || !se.End || se.Offset != 3 || err.Error() != "jsonscan: unexpected end of JSON input" {
		t.Errorf("SkipValue([1,) err = %#v", err)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`,
		`"\ud83dx\ude00"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"\xe2\x82\"", `"\u12g4"`, `"\x"`, "\"a\tb\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, ok := unquote(doc)
		want, wantOK := decodeJSON(doc)
		if wantOK && (len(doc) == 0 || doc[0] != '"' || doc[len(doc)-1] != '"') {
			return // another kind of value, or one with surrounding whitespace
		}
		if ok != wantOK || got != want {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json %q, %v", doc, got, ok, want, wantOK)
		}
	})
}

func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,{"b":null}],"c":[]}`, `[1,]`, `{"a"}`, `[01]`, `[tru]`, `-0.0e-0`, `"\u00e9"`, ` null `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := valid(doc, MaxDepth), json.Valid(doc); got != want {
			t.Fatalf("SkipValue(%q) valid = %v, encoding/json %v", doc, got, want)
		}
	})
}
