package qwenserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Env is where one simulated machine lives: a scratch HOME (the runtime
// dir is HOME/.qwen) and a workspace.
type Env struct {
	Home      string
	Workspace string
	Package   string // the installed @qwen-code/qwen-code package dir
	Node      string // the node binary
	ModelURL  string // the mock's …/v1
}

// RuntimeDir is Qwen's runtime dir under the scratch HOME.
func (e Env) RuntimeDir() string { return filepath.Join(e.Home, ".qwen") }

// Prepare writes the settings qwen-serve.md names into the scratch HOME.
func (e Env) Prepare() error {
	if err := os.MkdirAll(e.RuntimeDir(), 0o755); err != nil {
		return fmt.Errorf("qwenserve: %w", err)
	}
	if err := os.MkdirAll(e.Workspace, 0o755); err != nil {
		return fmt.Errorf("qwenserve: %w", err)
	}
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "openai"}, "folderTrust": map[string]any{"enabled": false}},
		"model":     map[string]any{"name": MockModel},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false},
		"tools":     map[string]any{"approvalMode": "yolo"},
	}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return fmt.Errorf("qwenserve: %w", err)
	}
	if err := os.WriteFile(filepath.Join(e.RuntimeDir(), "settings.json"), b, 0o644); err != nil {
		return fmt.Errorf("qwenserve: %w", err)
	}
	return nil
}

// Daemon is one running `qwen serve` process tree.
type Daemon struct {
	cmd    *exec.Cmd
	URL    string
	stderr *tailBuffer
	done   chan struct{}
	client *http.Client
	once   sync.Once
}

var listenRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)

// StartDaemon starts `node cli-entry.js serve --port 0 --workspace ws
// --no-web` with an environment built from scratch and waits (up to
// timeout) for the address it prints.
func StartDaemon(ctx context.Context, e Env, timeout time.Duration) (*Daemon, error) {
	// --initialize-timeout-ms: on a loaded machine the ACP child's
	// initialize can take longer than the default 10 s (504 init_timeout).
	cmd := exec.Command(e.Node, filepath.Join(e.Package, "cli-entry.js"), "serve", "--port", "0", "--workspace", e.Workspace, "--no-web",
		"--initialize-timeout-ms", "120000")
	cmd.Dir = e.Workspace
	cmd.Env = []string{
		"HOME=" + e.Home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TZ=UTC",
		"OPENAI_BASE_URL=" + e.ModelURL,
		"OPENAI_API_KEY=tpq-mock-key",
		"OPENAI_MODEL=" + MockModel,
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
		"NO_COLOR=1",
	}
	// Its own process group: the tree is found by parentage anyway, and a
	// signal to the test's group never reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("qwenserve: %w", err)
	}
	d := &Daemon{cmd: cmd, stderr: &tailBuffer{max: 64 << 10}, done: make(chan struct{}),
		client: &http.Client{Timeout: 150 * time.Second}} // above --initialize-timeout-ms
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("qwenserve: start daemon: %w", err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(d.done)
	}()
	select {
	case d.URL = <-addr:
		return d, nil
	case <-d.done:
		return nil, fmt.Errorf("qwenserve: daemon exited before listening: %s", d.stderrTail(600))
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	d.Kill()
	return nil, fmt.Errorf("qwenserve: daemon did not print its address within %v: %s", timeout, d.stderrTail(600))
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Stderr is the last 64 KiB the daemon wrote to stderr.
func (d *Daemon) Stderr() string { return d.stderr.String() }

// stderrTail is the last n bytes of Stderr, for errors.
func (d *Daemon) stderrTail(n int) string {
	s := d.stderr.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}

// Kill crashes the whole machine at once: every process of the daemon's
// tree is stopped (SIGSTOP, repeated until the tree stops growing, so no
// process writes after the crash instant), then killed, then reaped. It is
// safe to call twice.
func (d *Daemon) Kill() {
	d.once.Do(func() {
		root := d.cmd.Process.Pid
		stopped := map[int]bool{}
		for range 20 {
			grew := false
			for _, p := range descendants(root) {
				if !stopped[p] {
					_ = syscall.Kill(p, syscall.SIGSTOP)
					stopped[p] = true
					grew = true
				}
			}
			if !grew {
				break
			}
		}
		for p := range stopped {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		_ = syscall.Kill(-root, syscall.SIGKILL)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
		}
	})
}

// descendants lists root and every process below it, from /proc.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []int{root}
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// errHTTP carries a non-2xx answer of the daemon.
type errHTTP struct {
	Status int
	Body   string
}

func (e *errHTTP) Error() string { return fmt.Sprintf("qwenserve: HTTP %d: %s", e.Status, e.Body) }

// call posts body to path and decodes the answer into out (nil: ignore).
// An answer the daemon marks retryable (its ACP child's initialize timed
// out on a loaded machine: 504 init_timeout) is retried, up to three times.
func (d *Daemon) call(ctx context.Context, path string, body, out any) error {
	var err error
	for attempt := range 4 {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * time.Second):
			case <-ctx.Done():
				return err
			}
		}
		var h *errHTTP
		if err = d.call1(ctx, path, body, out); !errors.As(err, &h) || !strings.Contains(h.Body, `"retryable":true`) {
			return err
		}
	}
	return err
}

func (d *Daemon) call1(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("qwenserve: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("qwenserve: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("qwenserve: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("qwenserve: POST %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %w", path, &errHTTP{Status: resp.StatusCode, Body: strings.TrimSpace(string(rb))})
	}
	if out != nil && len(rb) > 0 {
		if err := json.Unmarshal(rb, out); err != nil {
			return fmt.Errorf("qwenserve: POST %s: %w", path, err)
		}
	}
	return nil
}

// CreateSession opens a session on the workspace.
func (d *Daemon) CreateSession(ctx context.Context, ws string) (string, error) {
	var out struct {
		SessionID string `json:"sessionId"`
	}
	if err := d.call(ctx, "/session", map[string]any{"cwd": ws, "approvalMode": "yolo"}, &out); err != nil {
		return "", err
	}
	if out.SessionID == "" {
		return "", errors.New("qwenserve: POST /session: no sessionId")
	}
	return out.SessionID, nil
}

// Prompt admits a prompt; the turn runs afterwards.
func (d *Daemon) Prompt(ctx context.Context, sid, text string) (string, error) {
	var out struct {
		PromptID string `json:"promptId"`
	}
	body := map[string]any{"prompt": []any{map[string]any{"type": "text", "text": text}}}
	if err := d.call(ctx, "/session/"+sid+"/prompt", body, &out); err != nil {
		return "", err
	}
	if out.PromptID == "" {
		return "", errors.New("qwenserve: prompt: no promptId")
	}
	return out.PromptID, nil
}

// Cancel aborts the session's running prompt.
func (d *Daemon) Cancel(ctx context.Context, sid string) error {
	return d.call(ctx, "/session/"+sid+"/cancel", map[string]any{}, nil)
}

// Resume restores a session after a restart without reconciling it.
func (d *Daemon) Resume(ctx context.Context, sid, ws string) error {
	return d.call(ctx, "/session/"+sid+"/resume", map[string]any{"cwd": ws}, nil)
}

// Terminal is one prompt terminal Qwen's /load reports.
type Terminal struct {
	PromptID string `json:"promptId"`
	Terminal string `json:"terminal"`
	Code     string `json:"code,omitempty"`
}

// Load cold-restores a session, which runs Qwen's own
// reconcileDanglingPromptTerminals, and returns the terminals it reports.
func (d *Daemon) Load(ctx context.Context, sid, ws string) ([]Terminal, error) {
	var out struct {
		PromptTerminals []Terminal `json:"promptTerminals"`
	}
	if err := d.call(ctx, "/session/"+sid+"/load", map[string]any{"cwd": ws}, &out); err != nil {
		return nil, err
	}
	return out.PromptTerminals, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
