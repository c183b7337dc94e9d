package turnverdict_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
)

// The rules' scenarios are written in acts directly, one per line, so that
// every rule is shown without any harness's record shapes:
//
//	<kind> [key=value…] ["text"]
//
// kind is an events/turn Kind name (prompt, turn-start, turn-end, output,
// reasoning, tool-call, tool-result, tool-ran, interrupt, compaction, error,
// note); keys: turn, prompt, msg, uuid, parent, call, name, seq, source
// (a Source name, "guessed" suffix with ~: source=user~), end, stop,
// reason, and the flags failed, retry, side, steer. A line that does not
// parse is a line that did not decode (damage).
func TestScenarios(t *testing.T) {
	turntest.Run(t, "testdata", turn.Harness{Name: "acts", Codec: actCodec{}, Mapper: turn.MapperFunc(actMapper)})
}

type actBody struct{ a turn.Act }

func (b actBody) Describe() string { return b.a.Describe() }

type actCodec struct{}

func (actCodec) Name() string          { return "acts" }
func (actCodec) Stream() events.Stream { return "acts" }

var kindsByName = func() map[string]turn.Kind {
	m := map[string]turn.Kind{}
	for k := turn.KindNone; k <= turn.KindDamage; k++ {
		m[k.String()] = k
	}
	return m
}()

func (actCodec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	s := strings.TrimSpace(string(line.Bytes))
	if s == "" {
		return dst, nil
	}
	var a turn.Act
	if i := strings.IndexByte(s, '"'); i >= 0 {
		text, err := strconv.Unquote(s[i:])
		if err != nil {
			return dst, errors.New("acts: bad text")
		}
		a.Text, s = text, s[:i]
	}
	f := strings.Fields(s)
	k, ok := kindsByName[f[0]]
	if !ok || k == turn.KindDamage {
		return dst, errors.New("acts: not an act")
	}
	a.Kind, a.Pos = k, line.Pos
	for _, kv := range f[1:] {
		key, val, _ := strings.Cut(kv, "=")
		switch key {
		case "turn":
			a.Turn = val
		case "prompt":
			a.Prompt = val
		case "msg":
			a.Message = val
		case "uuid":
			a.UUID = val
		case "parent":
			a.Parent = val
		case "call":
			a.Call = val
		case "name":
			a.Name = val
		case "seq":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return dst, errors.New("acts: bad seq")
			}
			a.Seq, a.HasSeq = n, true
		case "source":
			a.Origin = events.OriginCarried
			if v, ok := strings.CutSuffix(val, "~"); ok {
				val, a.Origin = v, events.OriginGuessed
			}
			found := false
			for s := turn.SourceUnknown; s <= turn.SourceAgent; s++ {
				if s.String() == val {
					a.Source, found = s, true
				}
			}
			if !found {
				return dst, errors.New("acts: bad source")
			}
		case "end":
			found := false
			for e := turn.EndNone; e <= turn.EndFailed; e++ {
				if e.String() == val {
					a.End, found = e, true
				}
			}
			if !found {
				return dst, errors.New("acts: bad end")
			}
		case "stop":
			found := false
			for st := turn.StopOpen; st <= turn.StopUnclear; st++ {
				if st.String() == val {
					a.Stop, found = st, true
				}
			}
			if !found {
				return dst, errors.New("acts: bad stop")
			}
		case "reason":
			a.Reason = strings.ReplaceAll(val, "_", " ")
		case "failed":
			a.Failed = true
		case "retry":
			a.Retry = true
		case "side":
			a.Side = true
		case "steer":
			a.Steer = true
		default:
			return dst, errors.New("acts: bad key " + key)
		}
	}
	return append(dst, events.Event{Stream: "acts", Pos: line.Pos, Kind: "acts." + events.Kind(f[0]), Body: actBody{a}}), nil
}

func actMapper(dst []turn.Act, ev events.Event) []turn.Act {
	a := ev.Body.(actBody).a
	a.Pos = ev.Pos
	return append(dst, a)
}
