package conformance

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Version is the reference release the harness runs against.
const Version = "0.24.4"

// ErrUnavailable classifies a missing node binary or reference package: the
// harness cannot run, which is not a disagreement.
var ErrUnavailable = errors.New("conformance: reference unavailable")

// JSResult is what the reference did with one scenario.
type JSResult struct {
	ID string `json:"id"`
	// Appended is the record the reference appended, nil when it appended
	// nothing.
	Appended map[string]any `json:"appended"`
	// Line is the appended record's exact bytes (no newline).
	Line string `json:"line,omitempty"`
	// Sealed: the ledger lacked a final newline and the reference wrote one
	// before its record.
	Sealed bool `json:"sealed"`
	// LedgerPath and TranscriptPath are where the package's SessionService
	// put the files, relative to the runtime dir.
	LedgerPath     string `json:"ledgerPath"`
	TranscriptPath string `json:"transcriptPath"`
	Error          string `json:"error,omitempty"`
}

// ParseJSResult decodes one result line of reconcile.mjs.
func ParseJSResult(line []byte) (JSResult, error) {
	var r JSResult
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&r); err != nil {
		return JSResult{}, fmt.Errorf("conformance: node result: %w", err)
	}
	if dec.More() {
		return JSResult{}, errors.New("conformance: node result: trailing data after the object")
	}
	if r.ID == "" {
		return JSResult{}, errors.New("conformance: node result: no id")
	}
	if r.Appended != nil && r.Line == "" {
		return JSResult{}, fmt.Errorf("conformance: node result %s: appended record without its line", r.ID)
	}
	return r, nil
}

// PackageDir finds the installed @qwen-code/qwen-code package the way
// reconcile.mjs does: $TAILPROOF_QWEN_PKG, the cache dir install.sh fills,
// then /tmp/qwenref.
func PackageDir() (string, error) {
	var candidates []string
	if p := os.Getenv("TAILPROOF_QWEN_PKG"); p != "" {
		candidates = append(candidates, p)
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache")
		}
	}
	if cache != "" {
		candidates = append(candidates, filepath.Join(cache, "tailproof", "qwen-code-"+Version, "node_modules", "@qwen-code", "qwen-code"))
	}
	candidates = append(candidates, "/tmp/qwenref/node_modules/@qwen-code/qwen-code")
	for _, c := range candidates {
		if st, err := os.Stat(filepath.Join(c, "chunks")); err == nil && st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: @qwen-code/qwen-code@%s not found (tried %s); run simulations/conformance/install.sh or set TAILPROOF_QWEN_PKG",
		ErrUnavailable, Version, strings.Join(candidates, ", "))
}

//go:embed node/reconcile.mjs
var script []byte

// ScriptPath returns the node side to run: $TAILPROOF_CONFORMANCE_SCRIPT when
// set, else the copy embedded in this package, written under dir (it finds
// the package by absolute path, so it runs from anywhere).
func ScriptPath(dir string) (string, error) {
	if p := os.Getenv("TAILPROOF_CONFORMANCE_SCRIPT"); p != "" {
		return p, nil
	}
	p := filepath.Join(dir, "reconcile.mjs")
	if err := os.WriteFile(p, script, 0o644); err != nil {
		return "", fmt.Errorf("conformance: write the node script: %w", err)
	}
	return p, nil
}

// Node is one long-lived node process running the reference over batches of
// scenarios; starting node and loading the 6 MB bundle takes about a second,
// so it is paid once.
type Node struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *bufio.Reader
	stderr  *limitedWriter
	Version string
	Package string
	mu      sync.Mutex
}

// StartNode starts reconcile.mjs under node. It returns an error wrapping
// ErrUnavailable when node, the script or the package is missing.
//
// dir is a scratch directory the node side may use.
func StartNode(ctx context.Context, dir string) (*Node, error) {
	bin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node not on PATH", ErrUnavailable)
	}
	script, err := ScriptPath(dir)
	if err != nil {
		return nil, err
	}
	pkg, err := PackageDir()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, script)
	cmd.Env = append(os.Environ(), "TAILPROOF_QWEN_PKG="+pkg, "TAILPROOF_SCRATCH="+dir,
		// A timestamp without an offset is local time to Date.parse and UTC
		// to tailproof, which has no time zone; pin node to UTC so a run does
		// not depend on the machine's zone.
		"TZ=UTC")
	stderr := &limitedWriter{n: 1 << 20}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("conformance: node stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("conformance: node stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("conformance: start node: %w", err)
	}
	n := &Node{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20), stderr: stderr, Package: pkg}
	line, err := n.out.ReadBytes('\n')
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("conformance: node did not start: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var hello struct {
		Hello   bool   `json:"hello"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(line, &hello); err != nil || !hello.Hello {
		n.Close()
		return nil, fmt.Errorf("conformance: node handshake %q: %v", line, err)
	}
	if hello.Version != Version {
		n.Close()
		return nil, fmt.Errorf("%w: package at %s is version %s, want %s", ErrUnavailable, pkg, hello.Version, Version)
	}
	n.Version = hello.Version
	return n, nil
}

// Run sends a batch and returns the reference's results in order.
func (n *Node) Run(batch []Scenario) ([]JSResult, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	werr := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(n.stdin)
		enc := json.NewEncoder(w)
		for _, s := range batch {
			if err := enc.Encode(s); err != nil {
				werr <- err
				return
			}
		}
		werr <- w.Flush()
	}()
	out := make([]JSResult, 0, len(batch))
	for range batch {
		line, err := n.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("conformance: node died: %v: %s", err, strings.TrimSpace(n.stderr.String()))
		}
		r, err := ParseJSResult(line)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := <-werr; err != nil {
		return nil, fmt.Errorf("conformance: write to node: %w", err)
	}
	for i := range out {
		if out[i].ID != batch[i].ID {
			return nil, fmt.Errorf("conformance: node answered %s for %s", out[i].ID, batch[i].ID)
		}
	}
	return out, nil
}

// Close ends the node process.
func (n *Node) Close() error {
	n.stdin.Close()
	return n.cmd.Wait()
}

// limitedWriter keeps the first n bytes of node's stderr for error messages;
// exec writes it from its own goroutine.
type limitedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(p), l.n)
		l.buf.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
