package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// trickyLines are inputs where a hand-rolled JSON reader is most likely to
// part from encoding/json.
var trickyLines = []string{
	// escapes in values and keys
	`{"v":1,"promptId":"a\"b\\c\/d\b\f\n\r\t","state":"in_flight","at":1}`,
	`{"\u0076":1,"\u0070romptId":"p","\u0073tate":"\u0069n_flight","\u0074ailUuid":"\u0075","at":1}`,
	`{"V":1,"promptId":"p","state":"in_flight","at":1}`,
	`{"v":1,"promptid":"p","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"p","State":"in_flight","terminal":"Completed","at":1}`,
	`{"v":1,"promptId":"p","state":"IN_FLIGHT","at":1}`,
	`{"v":1,"promptId":"p","terminal":"c\u006fmpleted","code":"\u0000","at":1}`,
	`{"v":1,"promptId":"\ud83d\ude00","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\ud83d","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\ude00\ud83d","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\ud83d\u0041","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\ud83d\ud83d\ude00","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\ud83dx\ude00","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\uD83D\uDE00\uFFFD","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\u12","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\u12g4","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\x","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"\'","state":"in_flight","at":1}`,
	"{\"v\":1,\"promptId\":\"\xff\xfe\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"\xed\xa0\x80\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"\xe2\x82\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"\xef\xbf\xbd\xc3\xa9\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"a\tb\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"a\x7fb\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\xff\":1,\"promptId\":\"p\",\"state\":\"in_flight\",\"at\":1}",
	// duplicate keys: the last wins, whatever its type
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"at":2}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"at":"2"}`,
	`{"v":1,"promptId":1,"state":"in_flight","at":1,"promptId":"q"}`,
	`{"v":1,"promptId":"p","state":"in_flight","state":"queued","terminal":"error","at":1}`,
	`{"v":1,"promptId":"p","terminal":"error","code":"a","code":null,"at":1}`,
	`{"v":1,"promptId":"p","state":"in_flight","tailUuid":"t","tailUuid":"","at":1}`,
	`{"v":2,"v":1,"promptId":"p","state":"in_flight","at":1}`,
	`{"v":1,"\u0076":2,"promptId":"p","state":"in_flight","at":1}`,
	// nested values, validated and skipped
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":{"a":[1,{"b":null}],"c":[]},"y":[[],{}]}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":{"a":[1,}]}}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":[1,]}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":{"a"}}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":{1:2}}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":[01]}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":[tru]}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":{"a":1]}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":[1}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":[ 1 , "a\u0041" , true , false , null ]}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,"x":{ "a" : { } , "b" : [ ] }}`,
	`{"v":1,"promptId":{"p":1},"state":"in_flight","at":1}`,
	`{"v":1,"promptId":"p","state":["in_flight"],"at":1}`,
	// whitespace
	" \t\r\n{ \"v\" : 1 ,\n\"promptId\"\t:\r\"p\" , \"state\" : \"in_flight\" , \"at\" : 1 } \n\t\r ",
	"\v{\"v\":1,\"promptId\":\"p\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"p\",\"state\":\"in_flight\",\"at\":1}\f",
	"\xef\xbb\xbf{\"v\":1,\"promptId\":\"p\",\"state\":\"in_flight\",\"at\":1}",
	"{\"v\":1,\"promptId\":\"p\",\"state\":\"in_flight\",\"at\":1}\x00",
	// numbers
	`{"v":1,"promptId":"p","state":"in_flight","at":1e400}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":-1e400}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1e-400}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":-0}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":-0.0}`,
	`{"v":1.0,"promptId":"p","state":"in_flight","at":1.0}`,
	`{"v":1E0,"promptId":"p","state":"in_flight","at":1E2}`,
	`{"v":10e-1,"promptId":"p","state":"in_flight","at":1e+2}`,
	`{"v":0.1e1,"promptId":"p","state":"in_flight","at":1.5}`,
	`{"v":1.0000000000000001,"promptId":"p","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":9007199254740992}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":9007199254740993}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":-9007199254740991}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":999999999999999}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1000000000000000}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":123456789012345678901234567890}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1e308}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1.7976931348623157e308}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1.7976931348623159e308}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1e99999999999999999999}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":0.000000000000000000000000000000000000001}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":01}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":+1}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":.5}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":5.}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1e}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1e+}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":-}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":--1}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":0x10}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":NaN}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":Infinity}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1_000}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":true}`,
	`{"v":true,"promptId":"p","state":"in_flight","at":1}`,
	// trailing garbage and truncation
	`{"v":1,"promptId":"p","state":"in_flight","at":1}}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1}x`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1} {}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1},`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1`,
	`{"v":1,"promptId":"p","state":"in_flight","at":`,
	`{"v":1,"promptId":"p","state":"in_flight","at"`,
	`{"v":1,"promptId":"p","state":"in_flight",`,
	`{"v":1,"promptId":"p","state":"in_fl`,
	`{"v":1,"promptId":"p\`,
	`{"v":1,"promptId":"p\u00`,
	`{"v":1,,"promptId":"p","state":"in_flight","at":1}`,
	`{"v":1,"promptId":"p","state":"in_flight","at":1,}`,
	`{"v" 1,"promptId":"p","state":"in_flight","at":1}`,
	`{'v':1}`,
	`{v:1}`,
	// not objects
	`null`, ` null `, `nul`, `true`, `false`, `1`, `"s"`, `[]`, `[1,2]`, `{}`, `{ }`, `[`, `{`, `}`,
	``, ` `, "\n", `{"":1}`,
}

// fileLines collects ledger lines from the repository's fixtures: whole
// .ledger.jsonl files and the JSON objects quoted in scenario files.
func fileLines(t testing.TB) []string {
	var out []string
	for _, pattern := range []string{
		"../../testdata/*/projects/*/chats/*.ledger.jsonl",
		"../../examples/*/projects/*/chats/*.ledger.jsonl",
		"../../testdata/*/*.txt",
		"../../adapters/jsonl/testdata/crash/*.txt",
	} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
				line := sc.Text()
				if i := strings.Index(line, `{"v"`); i >= 0 {
					out = append(out, line[i:])
				}
			}
		}
	}
	return out
}

// checkSame fails t when Decode and decodeOracle disagree on line.
func checkSame(t *testing.T, line []byte) {
	t.Helper()
	want, werr := decodeOracle(line)
	got, gerr := Decode(line)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("Decode(%q): err = %v, oracle err = %v", line, gerr, werr)
	}
	if werr != nil {
		if !errors.Is(gerr, ErrMalformed) {
			t.Fatalf("Decode(%q): error %v does not wrap ErrMalformed", line, gerr)
		}
		// Syntax and type errors are worded differently; the acceptance
		// rules' errors must read the same.
		const syntax = "ledger: malformed ledger record: not a JSON object"
		if strings.HasPrefix(werr.Error(), syntax) {
			if !strings.HasPrefix(gerr.Error(), syntax) {
				t.Fatalf("Decode(%q): err = %v, oracle err = %v", line, gerr, werr)
			}
		} else if gerr.Error() != werr.Error() {
			t.Fatalf("Decode(%q): err = %v, oracle err = %v", line, gerr, werr)
		}
		return
	}
	if got != want || math.Float64bits(got.AtFrac) != math.Float64bits(want.AtFrac) {
		t.Fatalf("Decode(%q)\n got %#v\nwant %#v", line, got, want)
	}
}

func TestDecodeMatchesOracle(t *testing.T) {
	lines := append(append([]string(nil), trickyLines...), fileLines(t)...)
	for _, l := range benchLines {
		lines = append(lines, l.line)
	}
	for _, l := range lines {
		checkSame(t, []byte(l))
	}
}

// Escapes and UTF-8 coercion hinge on exact code point boundaries a fuzzer
// rarely hits by mutation, so every \uXXXX escape, every surrogate pair
// edge and every one- and two-byte raw sequence is checked against the
// oracle here.
func TestDecodeStringsExhaustive(t *testing.T) {
	line := func(id string) []byte {
		return []byte(`{"v":1,"promptId":"` + id + `","state":"in_flight","at":1}`)
	}
	hex := func(r int) string { return fmt.Sprintf(`\u%04x`, r) }
	for r := range 0x10000 {
		checkSame(t, line(hex(r)+"x"))
	}
	edges := []int{0x0000, 0x0041, 0xd7ff, 0xd800, 0xd801, 0xdbfe, 0xdbff, 0xdc00, 0xdc01, 0xdffe, 0xdfff, 0xe000, 0xfffd, 0xffff}
	for _, hi := range edges {
		for _, lo := range edges {
			checkSame(t, line(hex(hi)+hex(lo)))
			checkSame(t, line(hex(hi)+strings.ToUpper(hex(lo)[2:])+hex(lo)))
		}
	}
	for c := range 0x100 {
		checkSame(t, line(string([]byte{byte(c)})))
		for c2 := range 0x100 {
			checkSame(t, line(string([]byte{byte(c), byte(c2)})))
		}
	}
	for _, seq := range []string{
		"\xc0\x80", "\xed\x9f\xbf", "\xed\xa0\x80", "\xed\xbf\xbf", "\xee\x80\x80",
		"\xf0\x90\x80\x80", "\xf0\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80", "\xef\xbf\xbd", "\xe0\xa0", "\xf0\x9f\x98",
	} {
		checkSame(t, line(seq))
		checkSame(t, line("a"+seq+"b"))
	}
}

// encoding/json allows 10000 levels of nesting (the top-level object is one)
// and rejects one more.
func TestDecodeNestingLimit(t *testing.T) {
	for _, depth := range []int{2, 33, 9999, 10000, 10001, 20000} {
		for _, open := range []string{"[", `{"a":`} {
			nest := depth - 1
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			line := `{"v":1,"promptId":"p","state":"in_flight","at":1,"x":` +
				strings.Repeat(open, nest) + "0" + strings.Repeat(closer, nest) + "}"
			checkSame(t, []byte(line))
			_, err := Decode([]byte(line))
			if (err == nil) != (depth <= jsonscan.MaxDepth) {
				t.Errorf("depth %d %s: err = %v", depth, open, err)
			}
		}
	}
}

// The kept strings must not alias the caller's buffer, which the line
// reader reuses.
func TestDecodeDoesNotAliasLine(t *testing.T) {
	line := []byte(`{"v":1,"promptId":"p1","terminal":"error","code":"c","stopReason":"s","at":1}`)
	r, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'x'
	}
	if r.PromptID != "p1" || r.Code != "c" || r.StopReason != "s" || r.Terminal != Error {
		t.Fatalf("record changed with its line: %#v", r)
	}
}

func FuzzDecodeDifferential(f *testing.F) {
	for _, l := range trickyLines {
		f.Add([]byte(l))
	}
	for _, l := range fileLines(f) {
		f.Add([]byte(l))
	}
	for _, l := range benchLines {
		f.Add([]byte(l.line))
	}
	for _, r := range []Record{
		InFlight("p1", 1, "rec-tail"),
		Terminal("p2", Completed, "", "", 2),
		Terminal("p", Interrupted, CodeDaemonLost, StopReconstructed, 1692000000789),
		InFlight("a<b>&\u2028\"\\\x01\n", 0, ""),
	} {
		f.Add(Encode(r))
	}
	f.Add([]byte(`{"v":1,"promptId":"p2","state":"in_fli`))
	f.Add([]byte(`not json at all`))
	f.Add([]byte(`{"v":1,"promptId":"p","terminal":"error","code":7,"stopReason":null,"at":1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkSame(t, line)
	})
}
