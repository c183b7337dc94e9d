package v0

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// compactLines are storage lines in the shapes dsh-session 0.1.0-rc.8
// writes (JSON.stringify): the compact path takes every one.
var compactLines = []string{
	`{"type":"assistant/chunk","seq":3,"time":1781000000003,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"tok1 "}}}`,
	`{"type":"assistant/chunk","seq":3,"time":17,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"a \"quoted\" é\u00e9 long enough to leave the short-string path"}}}`,
	`{"type":"assistant/chunk","seq":4,"time":17,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":"c1","name":"bash","argumentsDelta":"{\"a"}}}`,
	`{"type":"assistant/message","seq":5,"time":18,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}],"source":{"kind":"model"}}},"surfaceOp":"append"}`,
	`{"type":"tool/result","seq":6,"time":19,"data":{"turn":1,"step":1,"ok":true,"err":null,"f":-1.5e3,"e":[],"o":{}},"surfaceOp":"append","sourceEventSeqs":[5]}`,
	`{"type":"x/unknown","seq":7,"time":20,"data":{},"ignorable":true}`,
	`{"type":"turn/end","seq":9,"time":18,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	`{"type":"text-chunks","seq0":2,"time0":1781000000002,"data":{"turn":1,"step":1,"index":0,"dt":[3,3],"texts":["tok0 ","tok1 ","tok2 "]}}`,
	`{"type":"reasoning-chunks","seq0":2,"time0":12,"data":{"turn":1,"step":1,"index":0,"dt":[0,3],"texts":["thi","nk\"","ing é"]}}`,
	`{"type":"tool-call-chunks","seq0":5,"time0":15,"data":{"turn":1,"step":1,"index":1,"dt":[1,-1],"id":"c1","name":"bash","args":["{\"a","\":","1}"]}}`,
	`{"type":"tool-call-chunks","seq0":5,"time0":15,"data":{"turn":1,"step":1,"index":1,"dt":[],"id":"c1","args":["x"]}}`,
	`{"type":"text-chunks","seq0":0,"time0":-4,"data":{"turn":1.5,"step":1e0,"index":0,"dt":[1000000000000000],"texts":["a","b"]}}`,
	`{"type":"text-\u0063hunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}`,
}

// declinedLines are lines the compact path must leave to the general
// parser: not compact, not in dsh's key order, or refused.
var declinedLines = []string{
	`{ "type":"assistant/chunk","seq":3,"time":3,"data":{}}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{"turn": 1}}`,
	`{"type":"assistant/chunk","time":3,"seq":3,"data":{}}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{},"seq":4}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{},"extra":1}`,
	`{"type":"assistant/chunk","seq":3,"time":3}`,
	`{"type":"assistant/chunk","seq":03,"time":3,"data":{}}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{"a":tru}}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{"a":"x` + "\x01" + `"}}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{}} `,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":{}}}`,
	`{"type":"assistant/chunk","seq":3,"time":3,"data":` + strings.Repeat("[", compactDepth+1) + strings.Repeat("]", compactDepth+1) + `}`,
	`{"type":"text-chunks","seq0":2,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[3],"texts":["a","b","c"]}}`,
	`{"type":"text-chunks","seq0":-1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}`,
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}}`,
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[0.5],"texts":["a","b"]}}`,
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[1]}}`,
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"step":1,"turn":1,"index":0,"dt":[],"texts":["a"]}}`,
	`{"type":"tool-call-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}`,
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]},"x":1}`,
	`null`,
	`[1]`,
	``,
}

var recordCmp = []cmp.Option{cmp.AllowUnexported(Record{}, rowMember{}), cmpopts.EquateNaNs()}

// checkCompact fails when the compact path's answer differs from the
// general parser's: it may decline anything, but what it returns must be
// exactly what the full parse returns.
func checkCompact(t *testing.T, line []byte) (taken bool) {
	t.Helper()
	var fast Parser
	return checkCompactWith(t, &fast, line)
}

// checkCompactWith is checkCompact on a parser that may have read other
// lines before (what the compact path keeps from line to line, such as
// chunkData's head, must not change an answer).
func checkCompactWith(t *testing.T, fast *Parser, line []byte) (taken bool) {
	t.Helper()
	var full Parser
	got, ok := fast.fastLine(nil, line)
	if !ok {
		return false
	}
	want, err := full.parseGeneral(nil, line)
	if err != nil {
		t.Fatalf("compact path accepted a line the parser refuses (%v): %q", err, line)
	}
	if d := cmp.Diff(want, got, recordCmp...); d != "" {
		t.Fatalf("compact path differs on %q (-general +compact):\n%s", line, d)
	}
	return true
}

func TestCompactPathMatchesGeneral(t *testing.T) {
	for _, l := range compactLines {
		if !checkCompact(t, []byte(l)) {
			t.Errorf("declined a compact line: %s", l)
		}
	}
	for _, l := range declinedLines {
		if checkCompact(t, []byte(l)) {
			t.Errorf("took a line it must decline: %s", l)
		}
	}
	// One parser over a run of chunk lines whose heads change, repeat and
	// break: each answer is the general parser's.
	var p Parser
	for _, l := range chunkRun {
		checkCompactWith(t, &p, []byte(l))
	}
}

// chunkRun is a sequence of chunk lines for one parser: the same head
// twice, then a changed turn, step, type and index, a head broken just
// past the cached bytes, and the head again.
var chunkRun = []string{
	`{"type":"assistant/chunk","seq":1,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":2,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"b c d e f g h"}}}`,
	`{"type":"assistant/chunk","seq":3,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":1}}}`,
	`{"type":"assistant/chunk","seq":3,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"\x"}}}`,
	`{"type":"assistant/chunk","seq":3,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"x"}},"surfaceOp":"append"}`,
	`{"type":"assistant/chunk","seq":4,"time":1,"data":{"turn":12,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":5,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":6,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"text-delta","index":0,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":7,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":0,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":8,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":x,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"texx":"a"}}}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text"1"a"}}}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":["turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"tur":11,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text":"a"}}}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text":"a"}`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text":`,
	`{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":10,"chunk":{"type":"reasoning-delta","index":3,"text":"a"}}}`,
}

// FuzzCompactPath: on any bytes the compact path never panics, and when it
// answers its records are the general parser's.
//
//	go test -run='^$' -fuzz=FuzzCompactPath -fuzztime=60s ./events/dsh/v0
func FuzzCompactPath(f *testing.F) {
	for _, l := range append(compactLines, declinedLines...) {
		f.Add([]byte(l))
	}
	f.Add([]byte(strings.Join(chunkRun, "\n")))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkCompact(t, in)
		// Its lines through one parser that has read chunk lines before.
		var p Parser
		for _, l := range chunkRun[:2] {
			p.fastLine(nil, []byte(l))
		}
		for l := range bytes.SplitSeq(in, []byte{'\n'}) {
			checkCompactWith(t, &p, l)
		}
	})
}

// intAt agrees with number on every plain integer length and on the
// shapes around them (leading zeros, fractions, exponents, a sign, digits
// running to the end of the input).
func TestIntAt(t *testing.T) {
	var cases []string
	for n := 1; n <= 20; n++ {
		d := strings.Repeat("7", n)
		cases = append(cases, d, "1"+d[1:], "9"+d[1:], "0"+d, d+".5", d+"e2", "-"+d, "1"+strings.Repeat("0", n-1))
	}
	cases = append(cases, "0", "00", "-0", "0.0", "x", "", "12345678", "123456789012345", "9007199254740993")
	for _, c := range cases {
		for _, tail := range []string{"", ",", "}}}", `,"time":1781000000003,"data":{}}`} {
			b := []byte(c + tail)
			v, end := intAt(b, 0)
			e := num(b, 0)
			want, _ := number(span(b, 0, e))
			if end != e || (e >= 0 && v != want) {
				t.Errorf("intAt(%q) = %v, %d; number: %v, %d", b, v, end, want, e)
			}
		}
	}
}

func TestSkipNum(t *testing.T) {
	for _, c := range []string{"0", "00", "01", "-0", "-1", "1", "12", "123456789012345678901", "1.5", "1.", "1e", "1e5", "9,", "0}", "x", "", "-", "1E+2"} {
		if got, want := skipNum([]byte(c), 0), num([]byte(c), 0); got != want {
			t.Errorf("skipNum(%q) = %d, num %d", c, got, want)
		}
	}
}

// shortInt agrees with intAt on short and long plain integers and on the
// shapes around them.
func TestShortInt(t *testing.T) {
	for _, c := range []string{"0", "00", "01", "3", "12", "123", "1234", "12345678901234567", "0.5", "1.5", "12e1", "1E2", "-1", "x", "", "7", "99"} {
		for _, tail := range []string{"", ",", "]", ",4,5]", "]}}", "0", ".", "e"} {
			b := []byte(c + tail)
			v, end := shortInt(b, 0)
			wv, wend := intAt(b, 0)
			if end != wend || (end >= 0 && v != wv) {
				t.Errorf("shortInt(%q) = %v, %d; intAt: %v, %d", b, v, end, wv, wend)
			}
		}
	}
}

// TestWantSeq: the expected seq's digits, carried from one seq to the next
// or written out, match exactly the JSON text intAt reads as that seq.
func TestWantSeq(t *testing.T) {
	var q wantSeq
	check := func(v int64) {
		t.Helper()
		q.set(v)
		for _, tail := range []string{",", "}", "0", "1,", ".5,", "e1,", "E1,", "-"} {
			b := []byte(strconv.FormatInt(v, 10) + tail + `"time":1}`)
			got := q.match(b, 0)
			want, end := intAt(b, 0)
			if got > 0 && (want != float64(v) || got != end) {
				t.Fatalf("seq %d, %q: match ends at %d, intAt reads %v to %d", v, b, got, want, end)
			}
			// Kept as digits (0 to 9999999), a seq followed by what ends
			// a plain integer is matched; anything else is left to intAt.
			if plain := tail[0] == ',' || tail[0] == '}' || tail[0] == '-'; (got > 0) != (plain && v >= 0 && v <= 9999999) {
				t.Fatalf("seq %d, %q: match %d", v, b, got)
			}
		}
	}
	for v := int64(0); v < 1200; v++ {
		check(v)
	}
	for _, base := range []int64{9999, 99999, 999999, 9999999, 99999999} {
		for v := base - 3; v < base+3; v++ {
			check(v)
		}
	}
	check(5)
	check(123456)
	check(-1)
}

// TestStrAt: the word loop ends every string where str1 does, or declines
// to str1, on strings with a quote, backslash, control byte or UTF-8 at
// every position of the first words, and cut anywhere.
func TestStrAt(t *testing.T) {
	bodies := []string{"", "a", "tok12 ", "0123456", "01234567", "0123456789abcdef", "héllo wörld", "日本語のテキスト"}
	for _, body := range bodies {
		for _, bad := range []string{"", `"`, `\\`, `\"`, `\u0041`, "\x01", "\x1f", "\x7f", "\x80", "\xff", `\x`} {
			for at := 0; at <= len(body); at++ {
				s := `"` + body[:at] + bad + body[at:] + `"` + `,"next":"x"}` + strings.Repeat(" ", 9)
				for cut := len(s); cut > 0; cut-- {
					b := []byte(s[:cut])
					if got, want := strAt(b, 0), str1(b, 0); got != want {
						t.Fatalf("%q: strAt %d, str1 %d", b, got, want)
					}
				}
			}
		}
	}
}
