package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNamedTellsAStreamFromAMissingFile: a named input that is no file
// at all — standard input ("-"), or a link to a pipe as `<(cmd)` passes it
// (/dev/fd/N → "pipe:[N]") — is refused with what it is and what to do,
// not as a file that does not exist; a file that is truly missing still reads
// "does not exist".
func TestCheckNamedTellsAStreamFromAMissingFile(t *testing.T) {
	dir := t.TempDir()
	pipeLink := filepath.Join(dir, "fd")
	if err := os.Symlink("pipe:[4242]", pipeLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"-", "--transcript -: standard input cannot be read"},
		{pipeLink, `is a symbolic link to "pipe:[4242]", which is not a regular file`},
		{filepath.Join(dir, "missing.jsonl"), "missing.jsonl does not exist"},
	} {
		fsys, err := Within(c.path)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckNamed(fsys, "--transcript", c.path)
		fsys.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckNamed(%q) = %v, want an error containing %q", c.path, err, c.want)
		}
		if err != nil && Code(err, -1) != Input {
			t.Errorf("CheckNamed(%q): exit %d, want %d (input)", c.path, Code(err, -1), Input)
		}
	}
}
