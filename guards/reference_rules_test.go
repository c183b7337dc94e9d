package guards

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Every reference rule a guard comment cites ("reference V2", "V5/V6") is
// a row of docs/reference-rules.md, which quotes it from Qwen Code 0.24.4.
func TestCitedReferenceRulesAreQuoted(t *testing.T) {
	doc, err := os.ReadFile("../docs/reference-rules.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.go")
	cite := regexp.MustCompile(`\bV(\d+)\b`)
	seen := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cite.FindAllSubmatch(src, -1) {
			seen++
			row := regexp.MustCompile(`(?m)^\| V` + string(m[1]) + ` \|`)
			if !row.Match(doc) {
				t.Errorf("%s cites V%s, which docs/reference-rules.md does not quote", f, m[1])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no guard cites a reference rule: the check proved nothing")
	}
}
