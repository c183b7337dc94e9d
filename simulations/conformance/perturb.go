package conformance

import (
	"encoding/json"
	"strings"
)

// The perturbations below are the edges of the reference's readers that a
// well-behaved writer never produces but a crash, an older or newer writer,
// or a hand edit can: each one probes one rule of JSON.parse, Date.parse,
// node's readline, validateTranscriptRecord or the fragment aggregation.
// A scenario gets at most a couple, so a disagreement points at one rule.

type linePerturbation struct {
	name  string
	apply func(g *gen, lines []string) []string
}

// editRecord decodes line i, lets f change it, and encodes it back (keys
// sorted, which both readers accept).
func editRecord(lines []string, i int, f func(m map[string]any)) []string {
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[i]), &m); err != nil || m == nil {
		return lines
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		return lines
	}
	out := append([]string{}, lines...)
	out[i] = string(b)
	return out
}

func insertAt(lines []string, i int, s string) []string {
	out := append([]string{}, lines[:i]...)
	out = append(out, s)
	return append(out, lines[i:]...)
}

var oddTimestamps = []string{
	"2026-02-30T00:00:00Z", // an impossible day
	"2026-01-01",           // date only (UTC midnight)
	"2026-01-01T00:01:00",  // no zone: local time in JS
	"2026-01-01T00:01:00.123456Z",
	"2026-01-01t00:01:00z",
	"2026-01-01T05:31:00+05:30",
	"2026-01-01T00:01:00.5Z",
	"Thu, 01 Jan 2026 00:01:00 GMT", // RFC 1123: Date.parse accepts it
	"2026-01-01 00:01:00Z",
	"+002026-01-01T00:01:00.000Z",
	"",
}

var transcriptPerturbations = []linePerturbation{
	{"tr-crlf", nil}, // handled at join time
	{"tr-lone-cr", nil},
	{"tr-bom", nil},
	{"tr-blank-lines", func(g *gen, l []string) []string {
		return insertAt(l, g.r.IntN(len(l)+1), g.pick("   ", "\t", " \t "))
	}},
	{"tr-indented-line", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = "  " + out[i] + " "
		return out
	}},
	{"tr-mixed-session-id", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) { m["sessionId"] = "11111111-2222-4333-8444-555555555555" })
	}},
	{"tr-first-record-no-cwd", func(g *gen, l []string) []string {
		return editRecord(l, 0, func(m map[string]any) { delete(m, "cwd") })
	}},
	{"tr-first-record-colliding-cwd", func(g *gen, l []string) []string {
		// Same sanitized project dir, different workspace.
		return editRecord(l, 0, func(m map[string]any) { m["cwd"] = strings.ReplaceAll(g.cwd, "/", "-") })
	}},
	{"tr-first-record-worktree-cwd", func(g *gen, l []string) []string {
		return editRecord(l, 0, func(m map[string]any) { m["cwd"] = g.cwd + "/.qwen/worktrees/feature-x" })
	}},
	{"tr-later-record-foreign-cwd", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) { m["cwd"] = "/elsewhere" })
	}},
	{"tr-invalid-identity", func(g *gen, l []string) []string {
		i := g.r.IntN(len(l))
		return editRecord(l, i, func(m map[string]any) {
			switch g.r.IntN(4) {
			case 0:
				m["uuid"] = ""
			case 1:
				m["parentUuid"] = 5
			case 2:
				m["sessionId"] = ""
			default:
				delete(m, "parentUuid")
			}
		})
	}},
	{"tr-unknown-type", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) { m["type"] = g.pick("model", "User", "event") })
	}},
	{"tr-unknown-subtype", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) {
			m["subtype"] = g.pick("weird", "mid_turn_user_message", "background_task_completed")
		})
	}},
	{"tr-malformed-message", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) {
			switch g.r.IntN(4) {
			case 0:
				m["message"] = "text"
			case 1:
				m["message"] = map[string]any{"role": "model", "parts": "x"}
			case 2:
				m["message"] = map[string]any{"role": "model"}
			default:
				m["message"] = map[string]any{"role": "model", "parts": []any{}}
			}
		})
	}},
	{"tr-fragments", func(g *gen, l []string) []string {
		// A streamed record written as two fragments sharing its uuid; the
		// reference merges parts and keeps the larger timestamp string.
		i := g.r.IntN(len(l))
		var m map[string]any
		if json.Unmarshal([]byte(l[i]), &m) != nil || m == nil {
			return l
		}
		frag := map[string]any{}
		for k, v := range m {
			frag[k] = v
		}
		ts, _ := m["timestamp"].(string)
		frag["timestamp"] = g.pick(strings.Replace(ts, ".", "x", 1), strings.TrimSuffix(ts, "Z")+"9Z", "2026-01-01T00:00:00Z", ts)
		frag["message"] = map[string]any{"role": "model", "parts": []any{text("more")}}
		if g.p(0.3) {
			frag["parentUuid"] = nil
		}
		b, _ := json.Marshal(frag)
		return insertAt(l, i+1+g.r.IntN(len(l)-i), string(b))
	}},
	{"tr-parent-cycle", func(g *gen, l []string) []string {
		if len(l) < 2 {
			return l
		}
		var last map[string]any
		if json.Unmarshal([]byte(l[len(l)-1]), &last) != nil {
			return l
		}
		return editRecord(l, g.r.IntN(len(l)-1), func(m map[string]any) { m["parentUuid"] = last["uuid"] })
	}},
	{"tr-odd-timestamp", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) {
			switch g.r.IntN(6) {
			case 0:
				m["timestamp"] = float64(recordBaseMs + 5000)
			case 1:
				delete(m, "timestamp")
			default:
				m["timestamp"] = oddTimestamps[g.r.IntN(len(oddTimestamps))]
			}
		})
	}},
	{"tr-non-object-line", func(g *gen, l []string) []string {
		return insertAt(l, g.r.IntN(len(l)+1), g.pick("[1,2]", "null", "42", `"str"`, "true"))
	}},
	{"tr-glued-garbage", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = out[i] + g.pick(`{"uuid":`, `}`, `{}`, ` x`, `{"a":"}{"}`)
		return out
	}},
	{"tr-artifact-leaf", func(g *gen, l []string) []string {
		var last map[string]any
		if json.Unmarshal([]byte(l[len(l)-1]), &last) != nil {
			return l
		}
		rec := map[string]any{"uuid": "aaaaaaaa-0000-4000-8000-00000000a11f", "parentUuid": last["uuid"], "sessionId": g.sid,
			"timestamp": "2026-01-02T00:00:00.000Z", "type": "system", "cwd": g.cwd,
			"subtype": g.pick("session_artifact_event", "session_sources_snapshot", "managed_session_event_v1", "ui_telemetry", "attribution_snapshot")}
		b, _ := json.Marshal(rec)
		return append(append([]string{}, l...), string(b))
	}},
	{"tr-blank-daemon-id", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) { m["daemonPromptId"] = []any{"  ", "", 7}[g.r.IntN(3)] })
	}},
	{"tr-odd-provenance", func(g *gen, l []string) []string {
		return editRecord(l, g.r.IntN(len(l)), func(m map[string]any) { m["provenance"] = []any{"REAL_USER", "user", "", "system ", 3}[g.r.IntN(5)] })
	}},
	{"tr-unicode-escapes", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = strings.Replace(out[i], `"assistant"`, `"\u0061ssistant"`, 1)
		out[i] = strings.Replace(out[i], `"user"`, `"\u0075ser"`, 1)
		return out
	}},
}

var ledgerPerturbations = []linePerturbation{
	{"led-crlf", nil},
	{"led-lone-cr", nil},
	{"led-bom", nil},
	{"led-odd-at", func(g *gen, l []string) []string {
		i := g.r.IntN(len(l))
		at := g.pick("1767225600000.5", "-1", "0", "1.7672256e12", "17672256000000000000000", "1767225600000.0", "1E3")
		return replaceAt(l, i, at)
	}},
	{"led-empty-prompt-id", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = strings.Replace(out[i], `"promptId":"`, `"promptId":"`+`"`+`,"x":"`, 1)
		return out
	}},
	{"led-escaped-prompt-id", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		for i := range out {
			out[i] = strings.Replace(out[i], `"promptId":"p`, `"promptId":"\u0070`, 1)
		}
		return out
	}},
	{"led-odd-tail-uuid", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = strings.Replace(out[i], `"state":"in_flight"`, `"state":"in_flight","tailUuid":`+g.pick("5", "null", `""`, `["x"]`), 1)
		return out
	}},
	{"led-duplicate-keys", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = strings.Replace(out[i], `{"v":1,`, g.pick(`{"v":2,"v":1,`, `{"v":1,"v":2,`, `{"v":1,"promptId":"shadow",`), 1)
		return out
	}},
	{"led-odd-v", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = strings.Replace(out[i], `"v":1,`, `"v":`+g.pick("1.0", "1e0", `"1"`, "true", "10E-1")+",", 1)
		return out
	}},
	{"led-odd-code", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		for i := range out {
			if strings.Contains(out[i], `"terminal"`) {
				out[i] = strings.Replace(out[i], `"at":`, `"code":`+g.pick("5", "null", `"prompt_deadline_exceeded "`, `"prompt_deadline_exceeded"`)+`,"at":`, 1)
				break
			}
		}
		return out
	}},
	{"led-state-and-terminal", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		for i := range out {
			if strings.Contains(out[i], `"terminal"`) {
				out[i] = strings.Replace(out[i], `"terminal":`, `"state":"in_flight","terminal":`, 1)
				break
			}
		}
		return out
	}},
	{"led-whitespace", func(g *gen, l []string) []string {
		out := append([]string{}, l...)
		i := g.r.IntN(len(l))
		out[i] = g.pick(" ", "\t", "") + strings.ReplaceAll(out[i], ",", ", ") + g.pick(" ", "\t", "  ")
		return out
	}},
}

// replaceAt swaps the value of line i's "at" field for raw.
func replaceAt(l []string, i int, raw string) []string {
	out := append([]string{}, l...)
	j := strings.LastIndex(out[i], `"at":`)
	if j < 0 {
		return out
	}
	k := strings.IndexByte(out[i][j:], '}')
	if k < 0 {
		return out
	}
	out[i] = out[i][:j] + `"at":` + raw + out[i][j+k:]
	return out
}

// join writes lines with the separators the chosen perturbations ask for.
func (g *gen) join(lines []string, crlf, loneCR, bom bool) string {
	var b strings.Builder
	if bom {
		b.WriteString("\ufeff")
	}
	for i, l := range lines {
		b.WriteString(l)
		switch {
		case crlf:
			b.WriteString("\r\n")
		case loneCR && i < len(lines)-1 && g.p(0.5):
			b.WriteString("\r")
		default:
			b.WriteString("\n")
		}
	}
	return b.String()
}

// perturb applies up to two perturbations from list and reports the
// separator choices the join-time ones asked for.
func (g *gen) perturb(list []linePerturbation, lines []string) (out []string, crlf, loneCR, bom bool) {
	out = lines
	if len(lines) == 0 {
		return
	}
	k := 1 + g.r.IntN(2)
	for range k {
		p := list[g.r.IntN(len(list))]
		g.feature(p.name)
		switch {
		case strings.HasSuffix(p.name, "-crlf"):
			crlf = true
		case strings.HasSuffix(p.name, "-lone-cr"):
			loneCR = true
		case strings.HasSuffix(p.name, "-bom"):
			bom = true
		default:
			out = p.apply(g, out)
		}
	}
	return
}
