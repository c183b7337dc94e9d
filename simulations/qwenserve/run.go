package qwenserve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Config is how scenarios run.
type Config struct {
	Package string // the installed @qwen-code/qwen-code package
	Node    string // node binary
	// Scratch is where each scenario's HOME and workspace are made (and
	// removed afterwards unless kept).
	Scratch string
	// Keep, when set, receives a copy of every scenario state that scored
	// a wrong or unknown terminal (see KeepAll).
	Keep    string
	KeepAll bool
	// Wait bounds every wait for a scripted moment (a model request, a
	// ledger terminal, a tool); a moment that never comes is reported as a
	// missed kill point and the crash happens anyway.
	Wait time.Duration
	// StartTimeout bounds the daemon's start.
	StartTimeout time.Duration
	Logf         func(format string, args ...any)
}

func (c Config) wait() time.Duration {
	if c.Wait <= 0 {
		return 30 * time.Second
	}
	return c.Wait
}

func (c Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// posted is a prompt the harness admitted.
type posted struct {
	PromptID  string
	Plan      PromptPlan
	Epoch     int
	Cancelled bool // POST /cancel answered 204 while it ran
}

// runner is one scenario in progress.
type runner struct {
	cfg     Config
	sc      Scenario
	env     Env
	mock    *Mock
	sid     string
	prompts []*posted
	daemons []*Daemon
}

// Run runs one scenario end to end: every crash is scored by tailproof (dry
// run), the last one also by Qwen's own restart + load. Processes are
// always reaped before it returns.
func Run(ctx context.Context, cfg Config, sc Scenario) (res ScenarioResult, err error) {
	res.Scenario, res.Name, res.Shape = sc, sc.String(), sc.Shape
	dir, err := os.MkdirTemp(cfg.Scratch, fmt.Sprintf("tpq-%d-%d-", sc.Seed, sc.Index))
	if err != nil {
		return res, fmt.Errorf("qwenserve: %w", err)
	}
	mock, err := NewMock()
	if err != nil {
		return res, err
	}
	mock.HoldTimeout = cfg.wait()
	r := &runner{cfg: cfg, sc: sc, mock: mock,
		env: Env{Home: filepath.Join(dir, "home"), Workspace: filepath.Join(dir, "ws"), Package: cfg.Package, Node: cfg.Node, ModelURL: mock.URL()}}
	defer func() {
		for _, d := range r.daemons {
			d.Kill()
		}
		_ = mock.Close()
		if r.keep(res) {
			if kerr := keepState(cfg.Keep, sc, dir, mock.Log()); kerr != nil {
				cfg.logf("keep: %v", kerr)
			}
		}
		_ = os.RemoveAll(dir)
	}()
	if err := r.env.Prepare(); err != nil {
		return res, err
	}
	for i, ep := range sc.Epochs {
		d, err := r.start(ctx)
		if err != nil {
			return res, err
		}
		if i == 0 {
			if r.sid, err = d.CreateSession(ctx, r.env.Workspace); err != nil {
				return res, fmt.Errorf("qwenserve: %w: %s", err, d.stderrTail(400))
			}
		} else if err := d.Resume(ctx, r.sid, r.env.Workspace); err != nil {
			// A session whose first crash came before any transcript existed
			// can be neither resumed nor loaded: the first crash is final.
			res.ResumeRefused = err.Error()
			d.Kill()
			break
		}
		r.cfg.logf("epoch %d: session ready", i)
		missed := r.epoch(ctx, d, i, ep)
		r.cfg.logf("epoch %d: kill (%s)", i, missed)
		d.Kill()
		r.cfg.logf("epoch %d: killed", i)
		if cfg.Keep != "" {
			if err := snapshot(r.env.RuntimeDir(), dir, i); err != nil {
				cfg.logf("keep: %v", err)
			}
		}
		cr := CrashResult{Epoch: i, Kill: ep.Kill, Missed: missed}
		if cr.Prompts, cr.StatusErr, err = r.scoreTailproof(ctx, i); err != nil {
			return res, err
		}
		if cr.Shapes, err = transcriptShapes(r.transcriptPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
		res.Crashes = append(res.Crashes, cr)
	}
	last := &res.Crashes[len(res.Crashes)-1]
	last.Final = true
	if err := r.scoreQwen(ctx, last); err != nil {
		return res, err
	}
	res.Log = mock.Log()
	return res, nil
}

func (r *runner) start(ctx context.Context) (*Daemon, error) {
	t := r.cfg.StartTimeout
	if t <= 0 {
		t = 60 * time.Second
	}
	t0 := time.Now()
	d, err := StartDaemon(ctx, r.env, t)
	r.cfg.logf("daemon started in %v", time.Since(t0))
	if err != nil {
		return nil, err
	}
	r.daemons = append(r.daemons, d)
	return d, nil
}

func (r *runner) transcriptPath() string {
	return filepath.Join(r.chatsDir(), r.sid+".jsonl")
}

func (r *runner) ledgerPath() string {
	return filepath.Join(r.chatsDir(), r.sid+".ledger.jsonl")
}

func (r *runner) chatsDir() string {
	return filepath.Join(r.env.RuntimeDir(), "projects", sanitize(r.env.Workspace), "chats")
}

// sanitize is Qwen's project directory name for a cwd (ASCII paths only:
// the scratch dirs the harness makes).
func sanitize(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// trigger is the crash instant: closed once, by whichever scripted moment
// comes first.
type trigger struct {
	ch   chan struct{}
	once sync.Once
}

func (t *trigger) fire() { t.once.Do(func() { close(t.ch) }) }

func (t *trigger) fired() bool {
	select {
	case <-t.ch:
		return true
	default:
		return false
	}
}

// epoch sends the epoch's prompts and returns at its kill point ("" when
// the moment came, else why it was missed); the caller kills the tree.
func (r *runner) epoch(ctx context.Context, d *Daemon, idx int, ep Epoch) (missed string) {
	trig := &trigger{ch: make(chan struct{})}
	wait := r.cfg.wait()
	var target *PromptPlan
	if ep.Target >= 0 && ep.Target < len(ep.Prompts) {
		target = &ep.Prompts[ep.Target]
	}
	for i := range ep.Prompts {
		r.mock.Script(ep.Prompts[i].Marker, ep.Prompts[i].Steps)
	}
	watch := func(sig chan struct{}) {
		go func() {
			select {
			case <-sig:
				trig.fire()
			case <-ctx.Done():
			}
		}()
	}
	kind, marker, final, finalWords := KindPrompt, "", 0, 0
	switch {
	case ep.Notification:
		kind, finalWords = KindNotification, len(strings.Fields(notificationText))+1
	case target != nil && target.Marker == "":
		kind, finalWords = KindCompression, len(strings.Fields(compressionText))+1
	case target != nil:
		marker, final = target.Marker, len(target.Steps)-1
		finalWords = len(strings.Fields(target.Steps[final].Text)) + 1
	}
	switch ep.Kill {
	case KillFirstRequest:
		h := &Hold{Chunks: 0, Signal: make(chan struct{})}
		r.mock.HoldAt(kind, marker, 0, h)
		watch(h.Signal)
	case KillMidStream:
		h := &Hold{Chunks: max(1, finalWords/2), Signal: make(chan struct{})}
		r.mock.HoldAt(kind, marker, final, h)
		watch(h.Signal)
	case KillAfterAnswer:
		h := &Hold{Chunks: -1, Signal: make(chan struct{})}
		r.mock.HoldAt(kind, marker, final, h)
		watch(h.Signal)
	case KillDuringTool:
		flag := filepath.Join(r.env.Workspace, toolFlag(marker))
		go r.poll(ctx, trig, wait, func() bool { _, err := os.Stat(flag); return err == nil })
	}
	var interrupt *Hold
	if ep.Interrupting {
		interrupt = &Hold{Chunks: 1, Signal: make(chan struct{})}
		r.mock.HoldAt(KindNotification, "", 0, interrupt)
	}
	start := time.Now()
	var cancels []pendingCancel
	if ep.Notification && ep.Kill == KillRandom {
		go r.after(ctx, trig, time.Duration(ep.DelayMs)*time.Millisecond)
	}
	for i := range ep.Prompts {
		p := ep.Prompts[i]
		if trig.fired() {
			break
		}
		if ep.Interrupting && i == len(ep.Prompts)-1 {
			if !r.await(ctx, trig, interrupt.Signal, wait) {
				return "the notification turn never asked the model"
			}
		}
		var cancelHold *Hold
		if p.Cancel {
			cancelHold = &Hold{Chunks: 1, Signal: make(chan struct{})}
			r.mock.HoldAt(KindPrompt, p.Marker, len(p.Steps)-1, cancelHold)
		}
		id, err := d.Prompt(ctx, r.sid, p.Text)
		if err != nil {
			return "post: " + err.Error()
		}
		pp := &posted{PromptID: id, Plan: p, Epoch: idx}
		r.prompts = append(r.prompts, pp)
		if i == ep.Target && !ep.Notification {
			switch ep.Kill {
			case KillBeforeDispatch:
				trig.fire()
			case KillRandom:
				go r.after(ctx, trig, time.Duration(ep.DelayMs)*time.Millisecond)
			case KillAfterTerminal:
				go r.poll(ctx, trig, wait, func() bool { return r.hasTerminal(id) })
			}
		}
		if cancelHold != nil {
			c := pendingCancel{p: pp, hold: cancelHold, target: i == ep.Target && ep.Kill == KillAfterCancel}
			if ep.Queued {
				// Queued prompts are all admitted first; the cancel comes
				// once the running one streams.
				cancels = append(cancels, c)
			} else if m := r.cancel(ctx, d, trig, c, wait); m != "" {
				return m
			}
		}
		if !ep.Queued && i < len(ep.Prompts)-1 {
			r.poll(ctx, nil, wait, func() bool { return trig.fired() || r.hasTerminal(id) })
		}
	}
	for _, c := range cancels {
		if m := r.cancel(ctx, d, trig, c, wait); m != "" {
			return m
		}
	}
	select {
	case <-trig.ch:
		return ""
	case <-time.After(wait - time.Since(start)):
		return "timeout waiting for " + string(ep.Kill)
	case <-ctx.Done():
		return "context: " + ctx.Err().Error()
	}
}

// pendingCancel is a cancel the epoch still has to send.
type pendingCancel struct {
	p      *posted
	hold   *Hold
	target bool // the kill point is the instant the cancel is answered
}

// cancel waits for the held answer of c's prompt, then cancels it ("" on
// success or when the trigger fired first).
func (r *runner) cancel(ctx context.Context, d *Daemon, trig *trigger, c pendingCancel, wait time.Duration) string {
	if !r.await(ctx, trig, c.hold.Signal, wait) {
		if trig.fired() {
			return ""
		}
		return "the cancelled prompt's answer never started"
	}
	if err := d.Cancel(ctx, r.sid); err != nil {
		return "cancel: " + err.Error()
	}
	c.p.Cancelled = true
	if c.target {
		trig.fire()
	}
	return ""
}

// await waits for sig, the trigger or the timeout; true when sig came.
func (r *runner) await(ctx context.Context, trig *trigger, sig <-chan struct{}, wait time.Duration) bool {
	select {
	case <-sig:
		return true
	case <-trig.ch:
	case <-time.After(wait):
	case <-ctx.Done():
	}
	return false
}

func (r *runner) after(ctx context.Context, trig *trigger, d time.Duration) {
	select {
	case <-time.After(d):
		trig.fire()
	case <-ctx.Done():
	}
}

// poll checks cond every 10 ms up to wait; when it holds, it fires trig
// (nil: it only returns).
func (r *runner) poll(ctx context.Context, trig *trigger, wait time.Duration, cond func() bool) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if cond() {
			if trig != nil {
				trig.fire()
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hasTerminal reads the ledger for id's terminal: when to crash, never what
// happened.
func (r *runner) hasTerminal(id string) bool {
	b, err := os.ReadFile(r.ledgerPath())
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"promptId":"`+id+`"`) && strings.Contains(l, `"terminal"`) {
			return true
		}
	}
	return false
}

// isNotFound reports a daemon 404 (session_not_found).
func isNotFound(err error) bool {
	var h *errHTTP
	return errors.As(err, &h) && h.Status == http.StatusNotFound
}
