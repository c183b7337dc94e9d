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

// replayPage is what a page shows: the session, its events' timeline
// items, and the decision (at crashAt; -1: the end).
type replayPageOf struct {
	name    string
	dsh     bool
	events  int
	items   []timeline.Item
	out     outcome
	crashAt int
}

// pageOf is the page of a session held in memory.
func pageOf(s *session, o outcome, crashAt int) replayPageOf {
	tl := timeline.New()
	for i := range s.ev.Len() {
		tl.Add(s.ev.Event(i))
	}
	return replayPageOf{name: s.name, dsh: s.dsh, events: s.ev.Len(), items: tl.Items(), out: o, crashAt: crashAt}
}

// renderReplayHTML writes one self-contained page: inline CSS, script and
// SVG, the data inline, nothing fetched.
func renderReplayHTML(w io.Writer, p replayPageOf) error {
	src := "Qwen ledger + transcript"
	if p.dsh {
		src = "dsh session log"
	}
	items := p.items
	if items == nil {
		items = []timeline.Item{}
	}
	data, err := json.Marshal(replayPageData{Session: p.name, Source: src, Events: p.events, CrashAt: p.crashAt, Decision: p.out, Items: items})
	if err != nil {
		return err
	}
	return replayTemplate.Execute(w, struct {
		Title string
		Data  template.JS
	}{p.name, template.JS(data)})
}

func writeReplayHTML(path string, p replayPageOf) error {
	f, err := cli.CreateNamed("--html", path)
	if err != nil {
		return err
	}
	if err := renderReplayHTML(f, p); err != nil {
		f.Close()
		return cli.WithCode(cli.Write, fmt.Errorf("write %s: %w", path, err))
	}
	return cli.WithCode(cli.Write, f.Close())
}
