package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium runs Debian's headless Chromium with nothing that could reach the
// network, returning stdout. The test is skipped where chromium is absent
// (.ci/run installs it).
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("chromium not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

func renderPage(t *testing.T, args ...string) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "replay.html")
	code, _, errs := replayCLI(t, append([]string{"replay", "--html", page}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: nothing to fetch. The SVG namespace URI is a name,
	// not a request.
	html := strings.ReplaceAll(string(b), `"http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", " src=", " href=", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Fatalf("page references %q: it must need no network", bad)
		}
	}
	return page
}

func TestReplayHTMLRendersInChromium(t *testing.T) {
	// Prompt b1b2 of the deadline session, had the daemon died right after
	// its user record: unknown, vetoed by the deadline guard.
	t.Parallel()
	page := renderPage(t, append([]string{"--crash-at", "6"}, sessionArgs(sessDeadline)...)...)
	// One launch renders the DOM and the screenshot: a cold start costs
	// seconds on a shared machine.
	shot := filepath.Join(t.TempDir(), "replay.png")
	dom := string(chromium(t, "--window-size=1280,1000", "--hide-scrollbars", "--screenshot="+shot, "--dump-dom", "file://"+page))
	if !strings.Contains(dom, `data-rendered="true"`) {
		t.Fatalf("the page script did not finish:\n%.2000s", dom)
	}
	checks := []struct {
		what string
		re   string
		n    int
	}{
		{"verdict badge", `id="verdict-badge"[^>]*>unknown<`, 1},
		{"deadline veto", `<li><b>deadline</b>: prompt a1b2c3d4-0000-4000-8000-00000000000a exceeded its deadline`, 1},
		{"timeline rows", `<tr class="item[ "]`, 8}, // the model's turn 2 is a call and a text
		{"rows lost in the crash", `<tr class="item lost"`, 1},
		{"crash row", `id="crash-row"`, 1},
		{"crash line", `id="crash-line"`, 1},
		{"timeline dots", `<circle [^>]*class="dot"`, 8},
		{"prompt rows", `data-kind="prompt"`, 2 * 2}, // a row and a dot each
		{"tool call", `call_prof01 · run_shell_command`, 1},
		{"deadline terminal", `<td class="text">interrupted \(prompt_deadline_exceeded\)</td>`, 1},
	}
	for _, c := range checks {
		if got := len(regexp.MustCompile(c.re).FindAllString(dom, -1)); got != c.n {
			t.Errorf("%s: %d matches of %s, want %d", c.what, got, c.re, c.n)
		}
	}

	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colours, unknownBadge := paint(img, 0x7d, 0x5b, 0xa6)
	if colours < 50 {
		t.Fatalf("screenshot has %d distinct colours: blank or unstyled", colours)
	}
	// The verdict badge is painted in the unknown colour (#7d5ba6).
	if unknownBadge < 2000 {
		t.Fatalf("only %d pixels of the unknown verdict's colour: the badge did not render", unknownBadge)
	}
}

func TestReplayHTMLDSHInChromium(t *testing.T) {
	t.Parallel()
	page := renderPage(t, "--dsh", filepath.Join("..", "..", "examples", "dsh", "crashed-session.jsonl"))
	dom := string(chromium(t, "--dump-dom", "file://"+page))
	for _, re := range []string{`id="verdict-badge"[^>]*>interrupted<`, `call_2 · bash`, `turn/end`} {
		if !regexp.MustCompile(re).MatchString(dom) {
			t.Errorf("rendered page lacks %s", re)
		}
	}
	if strings.Contains(dom, `id="crash-row"`) {
		t.Error("a replay of the whole log shows no crash point")
	}
}

// paint counts the distinct colours of an image and the pixels close to one
// colour.
func paint(img image.Image, r0, g0, b0 uint8) (distinct, near int) {
	seen := map[uint32]bool{}
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r8, g8, b8 := uint8(r>>8), uint8(g>>8), uint8(b>>8)
			seen[uint32(r8)<<16|uint32(g8)<<8|uint32(b8)] = true
			if absDiff(r8, r0) < 8 && absDiff(g8, g0) < 8 && absDiff(b8, b0) < 8 {
				near++
			}
		}
	}
	return len(seen), near
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestReplayHTMLEscapesRecordText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lp, tp := filepath.Join(dir, "s.ledger.jsonl"), filepath.Join(dir, "s.jsonl")
	os.WriteFile(lp, []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1000}`+"\n"), 0o600)
	os.WriteFile(tp, []byte(`{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"1970-01-01T00:00:01.001Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"</script><script>document.body.remove()</script>"}]}}`+"\n"), 0o600)
	page := renderPage(t, "--ledger", lp, "--transcript", tp)
	b, _ := os.ReadFile(page)
	if bytes.Contains(b, []byte("</script><script>document")) {
		t.Fatal("record text closed the data script element")
	}
	if _, err := exec.LookPath("chromium"); err == nil {
		dom := string(chromium(t, "--dump-dom", "file://"+page))
		if !strings.Contains(dom, `data-rendered="true"`) || !strings.Contains(dom, "&lt;/script&gt;&lt;script&gt;document.body.remove()") {
			t.Fatalf("the hostile text is not shown as text:\n%.3000s", dom)
		}
	}
}
