package qwenserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/simulations/conformance"
)

// realDaemonSetup skips under -short (a real-daemon test takes the time
// took names), without node or without the published package, and otherwise
// returns them with a context that ends hangMargin before go test's
// -timeout (t.Deadline), so that -timeout governs how long the daemon may
// take and a hang fails the test with daemonContext's message, the process
// tree killed, instead of go test's panic with every goroutine's stack.
func realDaemonSetup(t *testing.T, took string) (node, pkg string, ctx context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the real daemon takes " + took)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	if pkg, err = conformance.PackageDir(); err != nil {
		t.Skipf("Qwen Code 0.24.4 not installed: %v", err)
	}
	deadline, ok := t.Deadline()
	ctx, cancel := daemonContext(t.Name(), took, deadline, ok)
	t.Cleanup(cancel)
	// Runs before cancel (cleanups run last first): a context that ran out
	// says why, whatever error the test stopped on.
	t.Cleanup(func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%v", context.Cause(ctx))
		}
	})
	if ctx.Err() != nil {
		t.FailNow()
	}
	return node, pkg, ctx
}

// hangMargin is what a real-daemon test keeps of go test's -timeout once
// its context has ended: Daemon.Kill stops and reaps the process tree
// (waiting up to 10 s for it), the cleanups run and the test reports.
const hangMargin = 30 * time.Second

// daemonContext is the context of a real-daemon test named name, which
// takes about took, under go test's deadline (ok false: -timeout 0, no
// bound). It ends hangMargin before the deadline; its cause says the test
// hung, when, and what to raise if the machine is only slow.
func daemonContext(name, took string, deadline time.Time, ok bool) (context.Context, context.CancelFunc) {
	if !ok {
		return context.WithCancel(context.Background())
	}
	at := deadline.Add(-hangMargin)
	return context.WithDeadlineCause(context.Background(), at, fmt.Errorf(
		"qwenserve: %s did not finish by %s, %v before go test's -timeout (%s): the real daemon, its ACP child or the mock model hung, or the machine is slower than the %s it usually takes (raise -timeout)",
		name, at.Format(time.RFC3339), hangMargin, deadline.Format(time.RFC3339), took))
}

// TestRealDaemon crashes the published daemon in the pinned scenarios and
// fails on any wrong tailproof terminal. It skips without node or the
// package (simulations/conformance/install.sh installs it) and under -short.
func TestRealDaemon(t *testing.T) {
	node, pkg, ctx := realDaemonSetup(t, "30 s to two minutes")
	cfg := Config{Package: pkg, Node: node, Scratch: t.TempDir(), Wait: 25 * time.Second, Logf: t.Logf}
	rep := NewReport(0)
	for _, sc := range Pinned() {
		res, err := Run(ctx, cfg, sc)
		if err != nil {
			t.Fatalf("%s: %v", sc, err)
		}
		var b strings.Builder
		WriteScenario(&b, res)
		t.Log(b.String())
		rep.Add(res)
		for _, c := range res.Crashes {
			if c.Missed != "" {
				t.Logf("%s: crash %d missed its moment: %s", sc, c.Epoch, c.Missed)
			}
		}
	}
	for _, w := range rep.Wrong {
		t.Errorf("wrong tailproof terminal: %s", w)
	}
	if rep.Final.Tailproof.Dangling == 0 {
		t.Errorf("no dangling prompt in %d crashes: the kill points do not land", rep.Crashes)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Log("\n" + b.String())
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		terminal string
		truth    Truth
		lost     bool
		want     Outcome
	}{
		{"", TruthCompleted, false, Unknown},
		{"completed", TruthCompleted, false, Correct},
		{"completed", TruthInterrupted, false, Wrong},
		{"completed", TruthNotAsked, false, Wrong},
		{"completed", TruthCancelled, false, Wrong},
		{"interrupted", TruthInterrupted, false, Correct},
		{"interrupted", TruthNotAsked, false, Correct},
		{"interrupted", TruthCancelled, false, Correct},
		{"interrupted", TruthCompleted, false, Wrong},
		{"interrupted", TruthCompleted, true, Correct},
		{"cancelled", TruthCancelled, false, Correct},
		{"cancelled", TruthInterrupted, false, Wrong},
		{"error", TruthInterrupted, false, Wrong},
		{"bogus", TruthCompleted, false, Wrong},
	} {
		if got := Judge(c.terminal, c.truth, c.lost); got != c.want {
			t.Errorf("Judge(%q, %s, lost=%v) = %s, want %s", c.terminal, c.truth, c.lost, got, c.want)
		}
	}
}

func TestTruthOf(t *testing.T) {
	p := &posted{Plan: PromptPlan{Marker: "[tpq-2]"}}
	log := []Exchange{
		{Kind: KindPrompt, Marker: "[tpq-1]", Final: true, Complete: true, Nonce: "n1"},
		{Kind: KindPrompt, Marker: "[tpq-2]", Step: 0, Complete: true},
		{Kind: KindSide, Final: true, Complete: true, Nonce: "side"},
	}
	if got, _ := truthOf(p, log); got != TruthInterrupted {
		t.Errorf("a tool step only: %s, want interrupted", got)
	}
	log = append(log, Exchange{Kind: KindPrompt, Marker: "[tpq-2]", Step: 1, Final: true, Complete: true, Nonce: "n2"})
	if got, n := truthOf(p, log); got != TruthCompleted || n != "n2" {
		t.Errorf("final answer streamed: %s %s", got, n)
	}
	if got, _ := truthOf(&posted{Plan: PromptPlan{Marker: "[tpq-3]"}, Cancelled: true}, log); got != TruthCancelled {
		t.Errorf("cancelled: %s", got)
	}
	if got, _ := truthOf(&posted{Plan: PromptPlan{Marker: "[tpq-4]"}}, log); got != TruthNotAsked {
		t.Errorf("never asked: %s", got)
	}
	if got, _ := truthOf(&posted{Plan: PromptPlan{Text: "/compress"}}, log); got != TruthNotAsked {
		t.Errorf("/compress without a compression request: %s", got)
	}
}

func TestHoldsAnswer(t *testing.T) {
	tr := []byte(`{"type":"system","subtype":"ui_telemetry","x":"nonce000001"}` + "\n" + `{"type":"assistant","message":{"parts":[{"text":"a nonce000002 "}]}}` + "\n")
	if holdsAnswer(tr, "nonce000001") {
		t.Error("a ui_telemetry record is not the answer")
	}
	if !holdsAnswer(tr, "nonce000002") {
		t.Error("the assistant record holds the answer")
	}
	if holdsAnswer(tr, "") {
		t.Error("no nonce, no answer")
	}
}

func TestGenerateIsSeeded(t *testing.T) {
	for i := range 40 {
		a, b := Generate(7, i, ""), Generate(7, i, "")
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("scenario %d differs between two draws:\n%s\n%s", i, a, b)
		}
		for _, e := range a.Epochs {
			if e.Kill == "" || len(e.Prompts) == 0 {
				t.Errorf("%s: epoch without kill point or prompts", a)
			}
			if !e.Notification && (e.Target < 0 || e.Target >= len(e.Prompts)) {
				t.Errorf("%s: target %d out of range", a, e.Target)
			}
			if e.Kill == KillDuringTool && !strings.Contains(e.Prompts[e.Target].Steps[0].Shell, toolFlag(e.Prompts[e.Target].Marker)) {
				t.Errorf("%s: during-tool target without its flag step", a)
			}
		}
	}
	if reflect.DeepEqual(Generate(1, 0, ""), Generate(2, 0, "")) && reflect.DeepEqual(Generate(1, 1, ""), Generate(2, 1, "")) {
		t.Error("the seed does not change the plans")
	}
}

func TestSanitize(t *testing.T) {
	if got := sanitize("/tmp/a b/c_d.e"); got != "-tmp-a-b-c-d-e" {
		t.Errorf("sanitize: %q", got)
	}
}

func body(msgs ...string) chatRequest {
	var req chatRequest
	for i := 0; i+1 < len(msgs); i += 2 {
		raw, _ := json.Marshal(msgs[i+1])
		req.Messages = append(req.Messages, struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}{msgs[i], raw})
	}
	return req
}

func TestClassify(t *testing.T) {
	const sys = "You are Qwen Code, a CLI agent operating through an ACP host"
	for _, c := range []struct {
		req    chatRequest
		kind   RequestKind
		marker string
		step   int
	}{
		{body("system", sys, "user", "<system-reminder>skills</system-reminder>[tpq-3] go"), KindPrompt, "[tpq-3]", 0},
		{body("system", sys, "user", "[tpq-3] go", "assistant", "", "tool", "out", "assistant", "", "tool", "out"), KindPrompt, "[tpq-3]", 2},
		{body("system", sys, "user", "[tpq-1] a", "assistant", "x", "user", "[tpq-2] b"), KindPrompt, "[tpq-2]", 0},
		{body("system", sys, "user", "[tpq-1] a", "user", "<task-notification>\n<task-id>bg</task-id>"), KindNotification, "", 0},
		// A prompt that aborted a notification turn: the notification is
		// still in its turn, before the prompt's own text.
		{body("system", sys, "user", "[tpq-1] a", "assistant", "x", "user", "<task-notification>\n<task-id>bg</task-id>", "user", "[tpq-2] b"), KindPrompt, "[tpq-2]", 0},
		{body("system", sys, "user", "[tpq-1] a", "assistant", "x", "user", "<task-notification>\n<task-id>bg</task-id>\n[tpq-2] b"), KindPrompt, "[tpq-2]", 0},
		{body("system", sys, "user", "[tpq-1] a", "assistant", "x", "user", "[tpq-2] b\n<task-notification>"), KindNotification, "", 0},
		{body("system", sys, "user", "[tpq-1] a", "user", "[SUGGESTION MODE: Suggest what the user might type]"), KindSide, "", 0},
		{body("system", "You are now acting as the managed memory extraction subagent", "user", "[tpq-1] a"), KindSide, "", 0},
		{body("system", sys, "user", "[tpq-1] a", "user", "You are the component that summarizes a conversation when"), KindCompression, "", 0},
		{body("system", sys, "user", "no marker"), KindSide, "", 0},
		{body("system", sys), KindSide, "", 0},
	} {
		kind, marker, step, _ := classify(c.req)
		if kind != c.kind || marker != c.marker || step != c.step {
			t.Errorf("classify %v = %s %q %d, want %s %q %d", c.req.Messages, kind, marker, step, c.kind, c.marker, c.step)
		}
	}
}

// FuzzClassify: any request body decodes or is refused, never panics.
func FuzzClassify(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"system","content":"You are Qwen Code"},{"role":"user","content":[{"type":"text","text":"[tpq-1] x"}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":7}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var req chatRequest
		if json.Unmarshal(b, &req) != nil {
			return
		}
		kind, marker, step, _ := classify(req)
		if kind != KindPrompt && (marker != "" || step != 0) {
			t.Fatalf("%s request with marker %q step %d", kind, marker, step)
		}
	})
}

// The mock streams a scripted answer, logs it as complete, and a hold
// stops it and waits for the client to leave.
func TestMockStreams(t *testing.T) {
	m, err := NewMock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	m.ChunkDelay = 0
	m.HoldTimeout = 5 * time.Second
	m.Script("[tpq-1]", []Step{{Shell: "echo hi"}, {Text: "all done"}})
	post := func(ctx context.Context, msgs ...string) (*http.Response, error) {
		b, _ := json.Marshal(body(msgs...))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.URL()+"/chat/completions", strings.NewReader(string(b)))
		return http.DefaultClient.Do(req)
	}
	const sys = "You are Qwen Code"
	resp, err := post(context.Background(), "system", sys, "user", "[tpq-1] go")
	if err != nil {
		t.Fatal(err)
	}
	var tool bool
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		tool = tool || strings.Contains(sc.Text(), `"run_shell_command"`)
	}
	resp.Body.Close()
	if !tool {
		t.Error("step 0 is a tool call")
	}
	h := &Hold{Chunks: 1, Signal: make(chan struct{})}
	m.HoldAt(KindPrompt, "[tpq-1]", 1, h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := post(ctx, "system", sys, "user", "[tpq-1] go", "assistant", "", "tool", "hi"); err == nil {
			_, _ = bufio.NewReader(resp.Body).ReadString('!')
			resp.Body.Close()
		}
	}()
	select {
	case <-h.Signal:
	case <-time.After(5 * time.Second):
		t.Fatal("the hold never came")
	}
	cancel()
	<-done
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if log := m.Log(); len(log) == 2 && log[1].Aborted {
			if !log[0].Complete || log[0].Final || !log[1].Final || log[1].Nonce == "" {
				t.Errorf("log: %+v", log)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the held answer was not logged as aborted: %+v", m.Log())
}

// Kill stops and kills every process of the tree, grandchildren included.
func TestKillReapsTheTree(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & sh -c 'sleep 60' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	d := &Daemon{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(d.done) }()
	t.Cleanup(d.Kill)
	var tree []int
	for range 200 {
		if tree = descendants(cmd.Process.Pid); len(tree) >= 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(tree) < 4 {
		t.Fatalf("tree %v did not grow", tree)
	}
	d.Kill()
	for _, p := range tree[1:] {
		deadline := time.Now().Add(5 * time.Second)
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(p) {
			t.Errorf("process %d survived the kill", p)
		}
	}
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

// daemonContext follows go test's deadline, not a fixed budget: it ends
// hangMargin before it, carries the hang's explanation as its cause, and has
// no deadline under -timeout 0.
func TestDaemonContext(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := daemonContext("TestX", "a minute", deadline, true)
	defer cancel()
	if at, ok := ctx.Deadline(); !ok || !at.Equal(deadline.Add(-hangMargin)) {
		t.Fatalf("deadline %v (set %v), want %v", at, ok, deadline.Add(-hangMargin))
	}
	ctx, cancel = daemonContext("TestX", "a minute", time.Time{}, false)
	defer cancel()
	if at, ok := ctx.Deadline(); ok {
		t.Fatalf("deadline %v under -timeout 0", at)
	}
	ctx, cancel = daemonContext("TestX", "a minute", time.Now().Add(hangMargin/2), true)
	defer cancel()
	<-ctx.Done()
	if cause := fmt.Sprint(context.Cause(ctx)); !errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		!strings.Contains(cause, "TestX did not finish") || !strings.Contains(cause, "raise -timeout") {
		t.Fatalf("err %v, cause %q", ctx.Err(), cause)
	}
}
