package tailproof

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tailproof/tailproof"

// A layer's production files may not import what sits above it: adapters
// and projections read, write and fold, and neither knows the façade nor
// the machines that decide; projections do not know the guards that read
// them. (Tests may import anything.)
var layers = []struct {
	dir       string
	forbidden []string // import paths, and everything below them
	why       string
}{
	{"adapters", []string{module, module + "/machines"}, "adapters do IO below the façade; the recovery service's wiring lives above them"},
	{"projections", []string{module, module + "/machines", module + "/guards"}, "projections fold events; the core and the guards read their output"},
	{"events", []string{module, module + "/machines", module + "/guards", module + "/projections", module + "/adapters"}, "events are the vocabulary everything else reads"},
	{"guards", []string{module, module + "/machines", module + "/adapters"}, "guards read evidence; they are consulted by the machines"},
	{"machines", []string{module, module + "/adapters"}, "the machines are pure: they take evidence, not stores"},
}

func forbids(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || (r != module && strings.HasPrefix(path, r+"/")) {
			return true
		}
	}
	return false
}

func TestLayering(t *testing.T) {
	fset := token.NewFileSet()
	for _, l := range layers {
		err := filepath.WalkDir(l.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if forbids(p, l.forbidden) {
					t.Errorf("%s imports %s: %s", path, p, l.why)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Importing the JetStream transport for its subscriber compiles no NATS
// server and no test helpers: those live in adapters/natsjs/natstest.
func TestNatsjsCompilesNoServer(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "./adapters/natsjs").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(dep, "github.com/nats-io/nats-server"),
			dep == module+"/adapters/memory", dep == module+"/adapters/bus/bustest", dep == module+"/adapters/natsjs/natstest":
			t.Errorf("adapters/natsjs depends on %s", dep)
		}
	}
}

func TestForbidsMatchesPathsAndSubtrees(t *testing.T) {
	roots := []string{module, module + "/machines"}
	for p, want := range map[string]bool{
		module: true, module + "/machines": true, module + "/machines/reconcile": true,
		module + "/adapters": false, module + "/machinesx": false,
	} {
		if got := forbids(p, roots); got != want {
			t.Errorf("forbids(%q) = %v, want %v", p, got, want)
		}
	}
}

// simulatorFrontEnds are the only production files outside simulations/
// allowed to import it: the commands that run the simulators (Qwen's daemon
// model, the Codex and Claude Code writer models, conformance).
var simulatorFrontEnds = map[string]bool{
	"cmd/tailproof/cmd_simulate.go":     true,
	"cmd/tailproof/harness_simulate.go": true,
	"cmd/tailproof/cmd_conformance.go":  true,
}

// Production code does not import simulations/ (issue #14): the recovery
// service's wiring is package service, the load generator
// cmd/tailproof/internal/loadgen. (Tests may import anything.)
func TestNoProductionImportOfSimulations(t *testing.T) {
	fset := token.NewFileSet()
	sim := module + "/simulations"
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch {
			case path == "simulations", d.Name() == "testdata", d.Name() == "node_modules", strings.HasPrefix(d.Name(), ".") && path != ".":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || simulatorFrontEnds[filepath.ToSlash(path)] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); forbids(p, []string{sim}) {
				t.Errorf("%s imports %s: production code does not depend on the simulator (the service's wiring is package service)", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: the walk missed the tree", checked)
	}
	for f := range simulatorFrontEnds {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("allowed front end %s: %v (update simulatorFrontEnds)", f, err)
		}
	}
}
