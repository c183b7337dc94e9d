package tailproof

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The core decides from evidence alone: the same evidence gives the same
// decision, byte for byte. So the core packages may not read a clock, draw
// global randomness, touch the filesystem or the network, or start
// goroutines of their own accord. Adapters and the CLI do all of that.
var corePackages = []string{".", "events", "projections", "guards", "machines"}

var forbiddenImports = map[string]string{
	"os":           "filesystem and environment belong in adapters",
	"math/rand":    "randomness is an input",
	"math/rand/v2": "randomness is an input",
	"net":          "the network belongs in adapters",
	"net/http":     "the network belongs in adapters",
	"os/exec":      "processes belong in adapters",
}

var forbiddenCalls = map[string]string{
	"time.Now":   "time is an input",
	"time.Since": "time is an input",
	"time.Until": "time is an input",
	"time.Sleep": "the core never waits",
	"time.After": "the core never waits",
	"time.Tick":  "the core never waits",
}

func TestCoreIsPure(t *testing.T) {
	fset := token.NewFileSet()
	for _, root := range corePackages {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (root == "." || d.Name() == "testdata") {
					return filepath.SkipDir // the root package only; subtrees are listed on their own
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if why, bad := forbiddenImports[p]; bad {
					t.Errorf("%s imports %q: %s", path, p, why)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok {
						if why, bad := forbiddenCalls[id.Name+"."+n.Sel.Name]; bad {
							t.Errorf("%s: %s: %s", fset.Position(n.Pos()), id.Name+"."+n.Sel.Name, why)
						}
					}
				case *ast.GoStmt:
					t.Errorf("%s: the core starts no goroutines", fset.Position(n.Pos()))
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
