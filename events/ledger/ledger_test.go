package ledger

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ids(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Describe())
	}
	return out
}

// Reference prompt-ledger.test.ts case 1: a non-string tailUuid is dropped,
// the record kept.
func TestTailUUIDMustBeString(t *testing.T) {
	in := string(Encode(InFlight("p1", 1, "rec-tail"))) + "\n" +
		`{"v":1,"promptId":"p2","state":"in_flight","tailUuid":42,"at":2}` + "\n"
	recs, dropped, err := Read(strings.NewReader(in), false)
	if err != nil || dropped != 0 {
		t.Fatal(err, dropped)
	}
	if d := cmp.Diff([]string{"IF p1 at=1 tail=rec-tail", "IF p2 at=2"}, ids(recs)); d != "" {
		t.Fatal(d)
	}
}

// Reference case 6: malformed lines are dropped; only p1 and p2 survive.
func TestMalformedLinesDropped(t *testing.T) {
	lines := []string{
		string(Encode(InFlight("p1", 1, ""))),
		`{"v":1,"promptId":"p2","state":"in_fli`,
		string(Encode(Terminal("p2", Completed, "", "", 2))),
		`not json at all`,
		`{"v":2,"promptId":"p3","state":"in_flight","at":3}`,
		`{"v":1,"promptId":"p4","terminal":"bogus","at":4}`,
		`{"v":1,"promptId":42,"state":"in_flight","at":5}`,
		``,
	}
	recs, dropped, err := Read(strings.NewReader(strings.Join(lines, "\n")), false)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"IF p1 at=1", "TERM p2 completed at=2"}, ids(recs)); d != "" {
		t.Fatal(d)
	}
	if dropped != 5 {
		t.Fatalf("dropped = %d, want 5", dropped)
	}
}

func TestEncodeMatchesReferenceBytes(t *testing.T) {
	cases := []struct {
		rec  Record
		want string
	}{
		{InFlight("p1", 1692000000000, ""), `{"v":1,"promptId":"p1","state":"in_flight","at":1692000000000}`},
		{InFlight("p1", 1692000000000, "rec-uuid"), `{"v":1,"promptId":"p1","state":"in_flight","tailUuid":"rec-uuid","at":1692000000000}`},
		{Terminal("p", Completed, "", "stop", 1692000000123), `{"v":1,"promptId":"p","terminal":"completed","stopReason":"stop","at":1692000000123}`},
		{Terminal("p", Error, "daemon_shutdown", "", 1692000000456), `{"v":1,"promptId":"p","terminal":"error","code":"daemon_shutdown","at":1692000000456}`},
		{Terminal("p", Interrupted, CodeDaemonLost, "", 1692000000789), `{"v":1,"promptId":"p","terminal":"interrupted","code":"daemon_lost","at":1692000000789}`},
		// JSON.stringify does not escape <, >, & or U+2028; it escapes control characters.
		{InFlight("a<b>&\u2028\"\\\x01\n", 0, ""), `{"v":1,"promptId":"a<b>&` + "\u2028" + `\"\\\u0001\n","state":"in_flight","at":0}`},
	}
	for _, c := range cases {
		if got := string(Encode(c.rec)); got != c.want {
			t.Errorf("Encode(%s)\n got %s\nwant %s", c.rec.Describe(), got, c.want)
		}
		back, err := Decode([]byte(c.want))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(Encode(back)); got != c.want {
			t.Errorf("re-encode: got %s want %s", got, c.want)
		}
	}
}

func TestAcceptanceEdges(t *testing.T) {
	cases := map[string]bool{
		`{"v":1,"promptId":"","state":"in_flight","at":1}`:                            true, // empty id is a string
		`{"v":1.0,"promptId":"p","state":"in_flight","at":1}`:                         true, // JSON.parse(1.0) === 1
		`{"v":"1","promptId":"p","state":"in_flight","at":1}`:                         false,
		`{"v":1,"promptId":"p","state":"in_flight","at":"1"}`:                         false,
		`{"v":1,"promptId":"p","state":"in_flight","at":1e400}`:                       false, // Infinity is not finite
		`{"v":1,"promptId":"p","state":"in_flight","terminal":"completed","at":1}`:    true,  // state wins
		`{"v":1,"promptId":"p","state":"queued","terminal":"cancelled","at":1}`:       true,
		`{"v":1,"promptId":"p","at":1}`:                                               false,
		`[1,2]`:                                                                       false,
		`null`:                                                                        false,
		`{"v":1,"promptId":"p","terminal":"error","code":7,"stopReason":null,"at":1}`: true, // non-string code dropped, record kept
	}
	for line, ok := range cases {
		_, err := Decode([]byte(line))
		if (err == nil) != ok {
			t.Errorf("Decode(%s): err=%v, want accepted=%v", line, err, ok)
		}
	}
	r, _ := Decode([]byte(`{"v":1,"promptId":"p","terminal":"error","code":7,"at":1}`))
	if r.HasCode {
		t.Error("non-string code must be dropped")
	}
}

// Reference cases 9–11: the first window line is always dropped.
func TestWindowDropsFirstLine(t *testing.T) {
	var b strings.Builder
	for i := range 4 {
		b.WriteString(string(Encode(InFlight("p"+string(rune('0'+i)), int64(i), ""))) + "\n")
	}
	line := len(Encode(InFlight("p0", 0, ""))) + 1
	all := b.String()
	window := all[len(all)-2*line:] // aligned on a line boundary
	recs, _, _ := Read(strings.NewReader(window), true)
	if d := cmp.Diff([]string{"IF p3 at=3"}, ids(recs)); d != "" {
		t.Fatal(d)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"promptId":"p1","state":"in_flight","tailUuid":"u","at":1}`))
	f.Add([]byte(`{"v":1,"promptId":"p1","terminal":"completed","stopReason":"s","code":"c","at":1.5}`))
	f.Add([]byte(`{"v":1,"promptId":"p\u0000","terminal":"error","at":-0}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := Decode(line)
		if err != nil {
			return
		}
		// Whatever is accepted re-encodes to a line that decodes to the same record.
		again, err := Decode(Encode(r))
		if err != nil {
			t.Fatalf("re-decode of %s: %v", Encode(r), err)
		}
		if again.Describe() != r.Describe() {
			t.Fatalf("round trip changed %q to %q", r.Describe(), again.Describe())
		}
	})
}
