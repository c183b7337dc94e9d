// Package turntest runs a harness's scenario files: datadriven files under a
// package's testdata/ whose input is a session file, one line per line, and
// whose commands print what each layer makes of it. Every harness codec
// uses it, so the files of different harnesses read the same way.
//
//	decode             each native record (Describe) or the classified error
//	acts               the acts the harness's mapper makes of the records
//	verdict [live]     the decision on every turn; the writer is taken as
//	                   stopped unless `live` is given
//
// Every input is also decoded with and without the fused line read
// (SameFused), which must agree. An input whose command carries `torn` has
// no newline after its last line.
// Escapes: <NUL> a zero byte, <CR> a carriage return, <BIG:N> N bytes of
// "x", <BAD> the invalid UTF-8 byte 0xff.
package turntest

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// Run runs every *.txt scenario under dir against h.
func Run(t *testing.T, dir string, h turn.Harness) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		if !strings.HasSuffix(path, ".txt") {
			return
		}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			file := File(td.Input, td.HasArg("torn"))
			SameFused(t, h, file)
			switch td.Cmd {
			case "decode":
				return Decode(file, h)
			case "acts":
				return Acts(file, h)
			case "verdict":
				return Verdicts(file, h, turnverdict.Options{WriterStopped: !td.HasArg("live")})
			}
			t.Fatalf("unknown command %q", td.Cmd)
			return ""
		})
	})
}

// File builds the session file of a scenario input.
func File(input string, torn bool) []byte {
	var b bytes.Buffer
	lines := strings.Split(input, "\n")
	for k, line := range lines {
		for {
			i := strings.Index(line, "<BIG:")
			if i < 0 {
				break
			}
			j := strings.IndexByte(line[i:], '>') + i
			n, _ := strconv.Atoi(line[i+5 : j])
			line = line[:i] + strings.Repeat("x", n) + line[j+1:]
		}
		line = strings.NewReplacer("<NUL>", "\x00", "<CR>", "\r", "<BAD>", "\xff").Replace(line)
		b.WriteString(line)
		if !torn || k < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// Decode prints each native event, or the classified decode error.
func Decode(file []byte, h turn.Harness) string {
	var b strings.Builder
	for ev, err := range events.Decode(bytes.NewReader(file), h.Codec, h.Options) {
		if err != nil {
			b.WriteString(describeErr(err) + "\n")
			continue
		}
		b.WriteString(strconv.Itoa(ev.Pos.Line) + " " + string(ev.Kind) + ": " + ev.Body.Describe() + "\n")
	}
	return b.String()
}

// Acts prints the acts of the file.
func Acts(file []byte, h turn.Harness) string {
	var b strings.Builder
	for a, err := range turn.Read(bytes.NewReader(file), h) {
		if err != nil {
			b.WriteString("error: " + err.Error() + "\n")
			break
		}
		b.WriteString(a.Describe() + "\n")
	}
	return b.String()
}

// Verdicts prints the decision on every turn of the file.
func Verdicts(file []byte, h turn.Harness, o turnverdict.Options) string {
	ds, err := turnverdict.DecideAll(turn.Read(bytes.NewReader(file), h), o)
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Describe())
	}
	if err != nil {
		b.WriteString("error: " + err.Error() + "\n")
	}
	if len(ds) == 0 {
		b.WriteString("no turns\n")
	}
	return b.String()
}

func describeErr(err error) string {
	var e *events.Error
	if !errors.As(err, &e) {
		return "error: " + err.Error()
	}
	class := "damage"
	switch {
	case errors.Is(err, events.ErrTornTail):
		class = "torn-tail"
	case errors.Is(err, events.ErrCorrupt):
		class = "corrupt"
	case errors.Is(err, events.ErrLineTooLong):
		class = "too-long"
	}
	return strconv.Itoa(e.Pos.Line) + " " + class + ": " + err.Error()
}
