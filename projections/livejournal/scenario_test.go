package livejournal

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// parseEventSpec reads one scenario event: a JSON wire line, or the short
// form `<type> [id=N] [prompt=P] [record=R] [data=JSON]`.
func parseEventSpec(line string) (*Event, error) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		return DecodeEvent([]byte(line))
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty event line")
	}
	ev := &Event{Type: fields[0]}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("bad field %q", f)
		}
		switch k {
		case "id":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, err
			}
			ev.ID = n
		case "prompt":
			ev.PromptID = v
		case "record":
			ev.RecordID = v
		case "data":
			ev.Data = []byte(v)
		default:
			return nil, fmt.Errorf("unknown field %q", k)
		}
	}
	return ev, nil
}

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		var j *Journal
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			switch d.Cmd {
			case "new":
				l := DefaultLimits()
				var opts []Option
				for _, a := range d.CmdArgs {
					switch a.Key {
					case "max-events":
						d.ScanArgs(t, a.Key, &l.MaxEvents)
					case "max-bytes":
						d.ScanArgs(t, a.Key, &l.MaxBytes)
					case "no-transcript":
						opts = append(opts, WithoutFullTranscript())
					default:
						d.Fatalf(t, "unknown arg %s", a.Key)
					}
				}
				var err error
				if j, err = New(l, opts...); err != nil {
					return "error: " + err.Error() + "\n"
				}
				fmt.Fprintf(&out, "limits: %d events, %d bytes\n", l.MaxEvents, l.MaxBytes)
			case "append":
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					ev, err := parseEventSpec(line)
					if err != nil {
						fmt.Fprintf(&out, "%s: parse error: %v\n", line, err)
						continue
					}
					o, err := j.Append(ev)
					if err != nil {
						fmt.Fprintf(&out, "%s: error: %v\n", ev.Describe(), err)
						continue
					}
					fmt.Fprintf(&out, "%s: %s (len=%d bytes=%d truncated=%d)\n", ev.Describe(), o, j.Len(), j.Bytes(), j.Truncated())
				}
			case "snapshot":
				var active string
				if d.HasArg("active") {
					d.ScanArgs(t, "active", &active)
				}
				for _, ev := range j.Snapshot(active) {
					out.WriteString(ev.Describe() + "\n")
					if ev.Type == TypeHistoryTruncated {
						m, err := MarkerFromEvent(ev)
						if err != nil {
							d.Fatalf(t, "journal built an invalid marker: %v", err)
						}
						out.WriteString("status: " + m.Status() + "\n")
					}
				}
				if out.Len() == 0 {
					out.WriteString("(empty)\n")
				}
			case "wire":
				var active string
				if d.HasArg("active") {
					d.ScanArgs(t, "active", &active)
				}
				for _, ev := range j.Snapshot(active) {
					out.Write(ev.AppendJSON(nil))
					out.WriteByte('\n')
				}
			case "marker":
				// Decode a wire line as a marker; with more lines, the rest are the
				// retained events used for attribution.
				lines := strings.Split(strings.TrimSpace(d.Input), "\n")
				m, err := DecodeMarker([]byte(lines[0]))
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				out.WriteString(m.Describe() + "\n")
				out.WriteString("status: " + m.Status() + "\n")
				var retained []*Event
				for _, line := range lines[1:] {
					ev, err := parseEventSpec(line)
					if err != nil {
						d.Fatalf(t, "%v", err)
					}
					retained = append(retained, ev)
				}
				if owner, err := m.Owner(retained); err != nil {
					fmt.Fprintf(&out, "owner: error: %v\n", err)
				} else {
					fmt.Fprintf(&out, "owner: %s\n", owner)
				}
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			return out.String()
		})
	})
}
