package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/projections/timeline"
)

//go:embed replayhtml/page.html
var replayPage string

var replayTemplate = template.Must(template.New("replay").Parse(replayPage))

// replayPageData is what the page's script renders. json.Marshal escapes
// <, > and &, so the data cannot close the <script> element it sits in.
type replayPageData struct {
	Session  string          `json:"session"`
	Source   string          `json:"source"`
	Events   int             `json:"events"`
	CrashAt  int             `json:"crashAt"`
	Decision outcome         `json:"decision"`
	Items    []timeline.Item `json:"items"`
}

// renderReplayHTML writes one self-contained page: inline CSS, script and
// SVG, the data inline, nothing fetched.
func renderReplayHTML(w io.Writer, s *session, o outcome, crashAt int) error {
	tl := timeline.New()
	for i := range s.ev.Len() {
		tl.Add(s.ev.Event(i))
	}
	src := "Qwen ledger + transcript"
	if s.dsh {
		src = "dsh session log"
	}
	items := tl.Items()
	if items == nil {
		items = []timeline.Item{}
	}
	data, err := json.Marshal(replayPageData{Session: s.name, Source: src, Events: s.ev.Len(), CrashAt: crashAt, Decision: o, Items: items})
	if err != nil {
		return err
	}
	return replayTemplate.Execute(w, struct {
		Title string
		Data  template.JS
	}{s.name, template.JS(data)})
}

func writeReplayHTML(path string, s *session, o outcome, crashAt int) error {
	f, err := cli.CreateNamed("--html", path)
	if err != nil {
		return err
	}
	if err := renderReplayHTML(f, s, o, crashAt); err != nil {
		f.Close()
		return cli.WithCode(cli.Write, fmt.Errorf("write %s: %w", path, err))
	}
	return cli.WithCode(cli.Write, f.Close())
}
