package qwenserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Step is one model response of a prompt's turn, scripted by the harness.
type Step struct {
	// Shell, when set, answers with a run_shell_command tool call running
	// this command; Background sets is_background.
	Shell      string
	Background bool
	// Text is the final answer's text (a step without Shell).
	Text string
	// PromptTokens is the usage the response reports (0: a small number).
	// /compress is refused unless the last turn reported many tokens.
	PromptTokens int
	// Fail, when set, answers with this HTTP status and an OpenAI error
	// body instead of a stream (a 400 is not retried by the client).
	Fail int
}

// Hold is what the mock does with one matching response: it may stop
// before the first byte, or after the given number of chunks, and wait for
// the client to go away (the kill) before returning.
type Hold struct {
	// Chunks: hold after this many content chunks (0: before any byte,
	// -1: after the whole response, [DONE] included).
	Chunks int
	// Signal is closed when the hold is reached.
	Signal chan struct{}
}

// RequestKind classifies a model request.
type RequestKind string

// Request kinds.
const (
	KindPrompt       RequestKind = "prompt"       // a user prompt's turn (its marker names it)
	KindNotification RequestKind = "notification" // a background notification turn
	KindCompression  RequestKind = "compression"  // /compress's summary request
	KindSide         RequestKind = "side"         // suggestion mode, memory extraction, titles: not ground truth
)

// Exchange is the mock's log of one model request: what was asked and how
// much of the answer was streamed. It is the harness's ground truth.
type Exchange struct {
	Seq    int         `json:"seq"`
	Kind   RequestKind `json:"kind"`
	Marker string      `json:"marker,omitempty"` // the prompt the request belongs to
	// Step is the index of the scripted step answered (the number of tool
	// results after the prompt's user message).
	Step int `json:"step"`
	// Final: the answer is a final text answer (no tool call).
	Final bool `json:"final"`
	// Nonce is a unique token in the answer's text, to tell whether the
	// answer reached the transcript (a lost completion).
	Nonce string `json:"nonce,omitempty"`
	// Complete: every byte of the answer, [DONE] included, was written and
	// flushed to the client.
	Complete bool `json:"complete"`
	// Aborted: the client went away before the answer was complete.
	Aborted bool   `json:"aborted"`
	Begin   int64  `json:"beginMs"`
	End     int64  `json:"endMs"`
	Summary string `json:"summary,omitempty"` // first words of the last user message (side requests)
}

// Mock is a scripted OpenAI-compatible chat/completions server on
// 127.0.0.1. Each prompt's text holds a marker ("[tpq-N]"); the request's
// last user message names the prompt and the number of tool results after
// it names the step.
type Mock struct {
	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex
	scripts map[string][]Step
	holds   map[string]*Hold // key marker/step
	log     []Exchange
	seq     int
	nonceN  int
	epoch   time.Time
	// ChunkDelay paces content chunks (a stream the kill can land in).
	ChunkDelay time.Duration
	// HoldTimeout bounds a hold: the mock gives up waiting for the kill.
	HoldTimeout time.Duration
	// Dump, when set, receives every request body (exploration).
	Dump func(seq int, body []byte)
	// notify paces nothing; it is closed per exchange when it ends.
	cond chan struct{}
}

// NewMock listens on 127.0.0.1:0.
func NewMock() (*Mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("qwenserve: mock listen: %w", err)
	}
	m := &Mock{ln: ln, scripts: map[string][]Step{}, holds: map[string]*Hold{}, epoch: time.Now(),
		ChunkDelay: 15 * time.Millisecond, HoldTimeout: 20 * time.Second, cond: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", m.chat)
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"`+MockModel+`","object":"model"}]}`)
	})
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// The answers of the turns no script names.
const (
	notificationText = "noted the background task"
	compressionText  = "<state_snapshot> the user ran scripted prompts </state_snapshot>"
)

// MockModel is the model name the daemon is configured with.
const MockModel = "tpq-mock"

// URL is the OpenAI base URL (…/v1).
func (m *Mock) URL() string { return "http://" + m.ln.Addr().String() + "/v1" }

// Close stops the server.
func (m *Mock) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		return m.srv.Close()
	}
	return nil
}

// Script sets the steps of the prompt with this marker.
func (m *Mock) Script(marker string, steps []Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts[marker] = steps
}

// HoldAt arms a hold on the next response of this kind (for a prompt: to
// marker's step).
func (m *Mock) HoldAt(kind RequestKind, marker string, step int, h *Hold) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holds[holdKey(kind, marker, step)] = h
}

func holdKey(kind RequestKind, marker string, step int) string {
	if kind != KindPrompt {
		return string(kind)
	}
	return fmt.Sprintf("%s/%d", marker, step)
}

// Log returns a copy of the exchanges so far, in arrival order.
func (m *Mock) Log() []Exchange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Exchange(nil), m.log...)
}

// Changed returns a channel closed when an exchange next changes.
func (m *Mock) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cond
}

func (m *Mock) update(i int, f func(*Exchange)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.log[i])
	m.log[i].End = time.Since(m.epoch).Milliseconds()
	close(m.cond)
	m.cond = make(chan struct{})
}

var markerRE = regexp.MustCompile(`\[tpq-[0-9]+\]`)

type chatRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream bool `json:"stream"`
}

// text flattens a message content (a string or an array of parts).
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// classify names the request: its kind, its prompt marker and its step.
func classify(req chatRequest) (kind RequestKind, marker string, step int, summary string) {
	sys := ""
	lastUser := -1
	for i, msg := range req.Messages {
		switch msg.Role {
		case "system":
			if sys == "" {
				sys = text(msg.Content)
			}
		case "user":
			lastUser = i
		}
	}
	if lastUser < 0 {
		return KindSide, "", 0, "no user message"
	}
	u := text(req.Messages[lastUser].Content)
	summary = u
	if len(summary) > 80 {
		summary = summary[:80]
	}
	switch {
	case strings.Contains(u, "SUGGESTION MODE"), !strings.HasPrefix(sys, "You are Qwen Code"):
		// Suggestion mode, the managed-memory extraction subagent and any
		// other side request with its own system prompt.
		return KindSide, "", 0, summary
	case strings.Contains(u, "summarizes a conversation"):
		return KindCompression, "", 0, summary
	}
	// The turn's user text: every user message since the last assistant
	// one. A prompt that aborted a notification turn runs with that
	// notification still in its history, right before its own text (Qwen
	// Code 0.24.4; real daemon, seed 1 scenario 26: the request of the
	// prompt's turn, under its own turn id, read as the notification's), so
	// whichever comes last — a prompt marker or a notification — names the
	// turn.
	turn := u
	for i := lastUser - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
		if req.Messages[i].Role == "user" {
			turn = text(req.Messages[i].Content) + "\n" + turn
		}
	}
	mk, at := "", -1
	if locs := markerRE.FindAllStringIndex(turn, -1); len(locs) > 0 {
		l := locs[len(locs)-1]
		mk, at = turn[l[0]:l[1]], l[0]
	}
	if n := strings.LastIndex(turn, "<task-notification>"); n > at {
		return KindNotification, "", 0, summary
	}
	if mk == "" {
		return KindSide, "", 0, summary
	}
	for _, msg := range req.Messages[lastUser+1:] {
		if msg.Role == "tool" {
			step++
		}
	}
	return KindPrompt, mk, step, summary
}

func (m *Mock) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
		return
	}
	kind, marker, step, summary := classify(req)
	m.mu.Lock()
	m.seq++
	seq := m.seq
	if m.Dump != nil {
		m.Dump(seq, body)
	}
	m.nonceN++
	ex := Exchange{Seq: seq, Kind: kind, Marker: marker, Step: step, Begin: time.Since(m.epoch).Milliseconds(), Summary: summary}
	var st Step
	switch kind {
	case KindPrompt:
		steps := m.scripts[marker]
		if step < len(steps) {
			st = steps[step]
		} else {
			st = Step{Text: "done"}
		}
	case KindNotification:
		st = Step{Text: notificationText}
	case KindCompression:
		st = Step{Text: compressionText}
	default:
		st = Step{Text: "ok"}
	}
	if st.Shell == "" {
		ex.Final = true
		ex.Nonce = fmt.Sprintf("nonce%06d", m.nonceN)
	}
	key := holdKey(kind, marker, step)
	hold := m.holds[key]
	if hold != nil && kind != KindSide {
		delete(m.holds, key)
	} else {
		hold = nil
	}
	idx := len(m.log)
	m.log = append(m.log, ex)
	close(m.cond)
	m.cond = make(chan struct{})
	m.mu.Unlock()

	if st.Fail != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st.Fail)
		_, _ = io.WriteString(w, `{"error":{"message":"scripted failure","type":"invalid_request_error","param":null,"code":null}}`)
		m.update(idx, func(e *Exchange) { e.Final, e.Nonce, e.Aborted = false, "", true })
		return
	}
	complete := m.stream(w, r, st, ex.Nonce, hold)
	m.update(idx, func(e *Exchange) {
		e.Complete = complete
		e.Aborted = !complete
	})
}

// stream writes the SSE answer; it reports whether every byte was flushed.
func (m *Mock) stream(w http.ResponseWriter, r *http.Request, st Step, nonce string, hold *Hold) bool {
	fl, ok := w.(http.Flusher)
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var chunks []string
	// The id reaches ui_telemetry records: it must not carry the nonce.
	id := fmt.Sprintf("chatcmpl-%d", time.Now().UnixNano())
	chunk := func(delta any, finish any, usage any) string {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": MockModel,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		return "data: " + string(b) + "\n\n"
	}
	pt := st.PromptTokens
	if pt == 0 {
		pt = 120
	}
	usage := map[string]any{"prompt_tokens": pt, "completion_tokens": 12, "total_tokens": pt + 12}
	if st.Shell != "" {
		args := map[string]any{"command": st.Shell, "description": "scripted step"}
		if st.Background {
			args["is_background"] = true
		}
		a, _ := json.Marshal(args)
		chunks = append(chunks, chunk(map[string]any{"role": "assistant", "content": "Running a command."}, nil, nil))
		chunks = append(chunks, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_" + id,
			"type": "function", "function": map[string]any{"name": "run_shell_command", "arguments": string(a)}}}}, nil, nil))
		chunks = append(chunks, chunk(map[string]any{}, "tool_calls", usage))
	} else {
		words := strings.Fields(st.Text + " " + nonce)
		for i, wd := range words {
			d := map[string]any{"content": wd + " "}
			if i == 0 {
				d["role"] = "assistant"
			}
			chunks = append(chunks, chunk(d, nil, nil))
		}
		chunks = append(chunks, chunk(map[string]any{}, "stop", usage))
	}
	chunks = append(chunks, "data: [DONE]\n\n")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	for i, c := range chunks {
		if hold != nil && hold.Chunks == i {
			return m.wait(r, hold)
		}
		if _, err := io.WriteString(w, c); err != nil {
			return false
		}
		fl.Flush()
		if i < len(chunks)-1 && m.ChunkDelay > 0 {
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(m.ChunkDelay):
			}
		}
	}
	if hold != nil && hold.Chunks < 0 {
		close(hold.Signal)
	}
	return true
}

// wait signals the hold and blocks until the client goes away or the hold
// times out; either way the answer is incomplete.
func (m *Mock) wait(r *http.Request, hold *Hold) bool {
	close(hold.Signal)
	select {
	case <-r.Context().Done():
	case <-time.After(m.HoldTimeout):
	}
	return false
}
