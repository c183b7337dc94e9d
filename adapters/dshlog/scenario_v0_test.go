package dshlog_test

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/klauspost/compress/zstd"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// TestRecoverV0Scenarios runs testdata/recover_v0.txt: a v0 log (raw lines,
// or with `zstd` one frame per blank-line-separated group, the first being the
// header frame), optionally torn (`tear=N` bytes off the end) or damaged
// (`flip=N` xors byte N), recovered on the strict memory FS. The output is
// the plan and the repaired log as the v0 reader decodes it.
func TestRecoverV0Scenarios(t *testing.T) {
	datadriven.RunTest(t, "testdata/recover_v0.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "recover" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		enc := v0.Raw
		if d.HasArg("zstd") {
			enc = v0.Zstd
		}
		var data []byte
		if enc == v0.Raw {
			data = []byte(d.Input + "\n")
		} else {
			w, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
			for _, group := range strings.Split(d.Input, "\n\n") {
				data = w.EncodeAll([]byte(group+"\n"), data)
			}
		}
		if d.HasArg("tear") {
			var n int
			d.ScanArgs(t, "tear", &n)
			data = data[:len(data)-n]
		}
		if d.HasArg("flip") {
			var n int
			d.ScanArgs(t, "flip", &n)
			data[n] ^= 0x20
		}
		m := memory.NewFS()
		p := path.Join("/r", "--w--", "s1", dshlog.V0NameOf(enc))
		if err := m.MkdirAll(path.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := dshlog.RecoverV0(m, p, v0.Options{})
		after, _ := m.ReadFile(p)
		var out strings.Builder
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			if bytes.Equal(after, data) {
				out.WriteString("file unchanged\n")
			}
			return out.String()
		}
		if rec.Plan.Noop() {
			out.WriteString("nothing to repair\n")
		}
		if rec.Plan.Cut >= 0 {
			fmt.Fprintf(&out, "cut at byte %d (%d bytes), original kept at %s\n", rec.Plan.Cut, rec.TruncatedBytes, rec.Evidence)
		}
		if rec.Plan.Salvaged > 0 {
			fmt.Fprintf(&out, "re-appended %d salvaged events\n", rec.Plan.Salvaged)
		}
		for _, c := range rec.Plan.Closers {
			fmt.Fprintf(&out, "closer %s\n", c.Line)
		}
		f, _ := m.OpenFile(p, 0, 0)
		defer f.Close()
		var lines []string
		res, err := v0.Scan(f, enc, v0.Options{}, func(r v0.Record) error {
			lines = append(lines, "  "+r.Describe())
			return nil
		})
		if err != nil {
			fmt.Fprintf(&out, "re-read: %v\n", err)
		}
		fmt.Fprintf(&out, "log: %d events", res.Events)
		if enc == v0.Zstd {
			out.WriteString(", " + strconv.Itoa(res.Frames) + " frames")
		}
		out.WriteString("\n" + strings.Join(lines, "\n") + "\n")
		return out.String()
	})
}
