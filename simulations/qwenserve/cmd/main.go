// Command qwenserve crashes the published Qwen Code 0.24.4 daemon (`qwen
// serve`) against a scripted model on 127.0.0.1 and scores tailproof and
// Qwen's own restart + /load on the files it left; see
// docs/adr/0016-real-daemon-oracle.md.
//
//	go run ./simulations/qwenserve/cmd --seed 1 --crashes 150 [--shape S] [--json out.json] [--keep DIR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"time"

	"github.com/tailproof/tailproof/simulations/conformance"
	"github.com/tailproof/tailproof/simulations/qwenserve"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the scenario plans")
	crashes := flag.Int("crashes", 20, "stop once this many crashes were scored")
	first := flag.Int("first", 0, "index of the first scenario")
	shape := flag.String("shape", "", "run only this shape (plain, queued, cancel, compress, background, resume)")
	jsonOut := flag.String("json", "", "write the report as JSON to this file")
	keep := flag.String("keep", "", "copy each state with an unknown or wrong tailproof terminal here")
	keepAll := flag.Bool("keep-all", false, "with --keep: keep every state")
	wait := flag.Duration("wait", 30*time.Second, "bound on every wait for a scripted moment")
	verbose := flag.Bool("v", false, "print each scenario")
	shapes := flag.String("shapes", "", "write the record shapes the daemon wrote to this file, one a line")
	flag.Parse()
	if err := run(*seed, *crashes, *first, qwenserve.Shape(*shape), *jsonOut, *shapes, *keep, *keepAll, *wait, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "qwenserve:", err)
		os.Exit(1)
	}
}

func run(seed uint64, crashes, first int, shape qwenserve.Shape, jsonOut, shapes, keep string, keepAll bool, wait time.Duration, verbose bool) error {
	pkg, err := conformance.PackageDir()
	if err != nil {
		return err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("node not on PATH: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	scratch, err := os.MkdirTemp("", "qwenserve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	cfg := qwenserve.Config{Package: pkg, Node: node, Scratch: scratch, Keep: keep, KeepAll: keepAll, Wait: wait}
	if verbose {
		t0 := time.Now()
		cfg.Logf = func(f string, a ...any) {
			fmt.Fprintf(os.Stderr, "%7.2fs "+f+"\n", append([]any{time.Since(t0).Seconds()}, a...)...)
		}
	}
	rep := qwenserve.NewReport(seed)
	for i := first; rep.Crashes < crashes && ctx.Err() == nil; i++ {
		sc := qwenserve.Generate(seed, i, shape)
		res, err := qwenserve.Run(ctx, cfg, sc)
		if err != nil {
			rep.Fail(sc, err)
			fmt.Fprintf(os.Stderr, "%s: %v\n", sc, err)
			continue
		}
		rep.Add(res)
		if verbose {
			qwenserve.WriteScenario(os.Stderr, res)
		}
	}
	rep.WriteTable(os.Stdout)
	if jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if shapes != "" {
		out := fmt.Sprintf("# Record shapes the published Qwen Code 0.24.4 daemon wrote: seed %d, %d crashes\n", seed, rep.Crashes)
		for _, s := range rep.ShapeList() {
			out += s + "\n"
		}
		if err := os.WriteFile(shapes, []byte(out), 0o644); err != nil {
			return err
		}
	}
	if len(rep.Wrong) > 0 {
		return fmt.Errorf("%d wrong tailproof terminals", len(rep.Wrong))
	}
	return nil
}
