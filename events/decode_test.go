package events_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/events"
)

// glued decodes every `{…}` object on a line as an event whose body is the
// object's text; an unbalanced remainder is an error. Enough to test the
// reader's classification without a real format.
type glued struct{}

type text string

func (t text) Describe() string { return string(t) }

func (glued) Name() string          { return "glued" }
func (glued) Stream() events.Stream { return "test" }
func (glued) DecodeLine(dst []events.Event, l events.Line) ([]events.Event, error) {
	s := string(l.Bytes)
	for len(s) > 0 {
		if s[0] != '{' {
			return dst, errors.New("not an object")
		}
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return dst, errors.New("unterminated object")
		}
		dst = append(dst, events.Event{Pos: l.Pos, Body: text(s[:end+1])})
		s = s[end+1:]
	}
	return dst, nil
}

func decodeAll(t *testing.T, in string, opts events.Options) []string {
	t.Helper()
	var out []string
	for ev, err := range events.Decode(strings.NewReader(in), glued{}, opts) {
		switch {
		case errors.Is(err, events.ErrTornTail):
			out = append(out, "torn@"+itoa(err.(*events.Error).Pos.Line))
		case errors.Is(err, events.ErrCorrupt):
			out = append(out, "corrupt@"+itoa(err.(*events.Error).Pos.Line))
		case errors.Is(err, events.ErrLineTooLong):
			out = append(out, "toolong@"+itoa(err.(*events.Error).Pos.Line))
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, ev.Body.Describe())
		}
	}
	return out
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestDecodeClassifiesBadLines(t *testing.T) {
	cases := []struct {
		name, in string
		opts     events.Options
		want     []string
	}{
		{"clean", "{a}\n{b}\n", events.Options{}, []string{"{a}", "{b}"}},
		{"torn final fragment", "{a}\n{b", events.Options{}, []string{"{a}", "torn@2"}},
		{"corrupt middle", "{a}\nxx\n{c}\n", events.Options{}, []string{"{a}", "corrupt@2", "{c}"}},
		{"bad lines at the end are torn", "{a}\nxx\nyy\n", events.Options{}, []string{"{a}", "torn@2", "torn@3"}},
		{"glued pair, second torn, at the end", "{a}\n{b}{c", events.Options{}, []string{"{a}", "{b}", "torn@2"}},
		{"glued pair, second torn, then valid", "{a}{b\n{c}\n", events.Options{}, []string{"{a}", "corrupt@1", "{c}"}},
		{"unterminated but decodable final line", "{a}\n{b}", events.Options{}, []string{"{a}", "{b}"}},
		{"unterminated final line when newline required", "{a}\n{b}", events.Options{RequireNewline: true}, []string{"{a}", "torn@2"}},
		{"line over the limit", "{a}\n{bbbbbbbbbbbbbbbbbbbb}\n{c}\n", events.Options{MaxLineBytes: 8}, []string{"{a}", "toolong@2", "{c}"}},
		{"empty input", "", events.Options{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, decodeAll(t, c.in, c.opts)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestErrorNamesStreamAndPosition(t *testing.T) {
	for _, err := range events.Decode(strings.NewReader("{a}\nxx\n{c}\n"), glued{}, events.Options{}) {
		if err != nil {
			want := "events: test line 2, offset 4: corrupt record: not an object"
			if err.Error() != want {
				t.Fatalf("got %q\nwant %q", err.Error(), want)
			}
			return
		}
	}
	t.Fatal("no error")
}

func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nb\n"), 4)
	f.Add([]byte("\n\n\nxyz"), 1)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max = max%64 + 1
		var total int64
		lines := 0
		for l, err := range events.Lines(strings.NewReader(string(data)), max) {
			if err != nil {
				t.Fatal(err)
			}
			lines++
			if l.Pos.Offset != total {
				t.Fatalf("line %d at offset %d, want %d", l.Pos.Line, l.Pos.Offset, total)
			}
			if !l.TooLong && int64(len(l.Bytes)) != l.Size {
				t.Fatalf("size %d != len %d", l.Size, len(l.Bytes))
			}
			total += l.Size
			if l.Terminated {
				total++
			}
		}
		if total != int64(len(data)) {
			t.Fatalf("lines cover %d of %d bytes", total, len(data))
		}
	})
}

// Only the framer knows whether a bad final line had its newline; the flag
// lets a caller tell a fragment never written whole from a whole line that
// does not decode, without reading Detail.
func TestDecodeMarksUnterminatedSegments(t *testing.T) {
	cases := []struct {
		in   string
		opts events.Options
		want []bool // Unterminated of each error, in order
	}{
		{"{a}\n{b", events.Options{}, []bool{true}},
		{"{a}\nxx\n", events.Options{}, []bool{false}},
		{"{a}\nxx\n{b", events.Options{}, []bool{false, true}},
		{"{a}\n{b}", events.Options{RequireNewline: true}, []bool{true}},
		{"{a}\n" + strings.Repeat("x", 80), events.Options{MaxLineBytes: 16}, []bool{true}},
		{"{a}\n" + strings.Repeat("x", 80) + "\n", events.Options{MaxLineBytes: 16}, []bool{false}},
	}
	for _, c := range cases {
		var got []bool
		for _, err := range events.Decode(strings.NewReader(c.in), glued{}, c.opts) {
			var de *events.Error
			if errors.As(err, &de) {
				got = append(got, de.Unterminated)
			}
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q: Unterminated (-want +got):\n%s", c.in, diff)
		}
	}
}
