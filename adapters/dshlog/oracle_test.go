package dshlog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/dshlog/oracle"
	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// The differential check against the published backend (ADR 0017): sessions
// written by @deepseek-ai/dsh-session-persistence-jsonl 0.1.0-rc.8 itself,
// cut at every byte of their last frame or record and at random earlier
// points, recovered by tailproof and by the package's own load(); the two
// must agree on what is refused, what is cut and salvaged, and the balanced
// events; then the package must load tailproof's repaired file unchanged.
//
// Bounded by default (a few sessions, about a minute); the full run is
//
//	TAILPROOF_DSH_DIFF=full go test -run TestOracleV0 -timeout 60m ./adapters/dshlog
//
// It needs the oracle installed (adapters/dshlog/oracle/install.sh) and
// skips without it.

func startOracle(t *testing.T) *oracle.Oracle { return oracle.Start(t) }

type config struct {
	compression string
	pack        bool
}

func (c config) enc() v0.Encoding {
	if c.compression == "none" {
		return v0.Raw
	}
	return v0.Zstd
}

const (
	oracleID  = "sess~/01" // escapes: ~007E, ~002F
	oracleCwd = "/home/me/proj x"
)

// writeSession has the package write one session and returns its file.
func writeSession(t *testing.T, o *oracle.Oracle, c config, seed, turns int, big ...bool) (root, rel string, data []byte) {
	root = t.TempDir()
	if _, err := o.Write(root, c.compression, c.pack, oracleID, oracleCwd, seed, turns, len(big) > 0 && big[0]); err != nil {
		t.Fatal(err)
	}
	key, _ := dshlog.ProjectKey(oracleCwd)
	seg, _ := dshlog.EncodeSegment(oracleID)
	rel = filepath.Join(key, seg, dshlog.V0NameOf(c.enc()))
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return root, rel, data
}

// lastUnitStart is where the last frame (zstd) or record (raw) starts.
func lastUnitStart(t *testing.T, data []byte, enc v0.Encoding) int {
	if enc == v0.Raw {
		return bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	}
	fr := v0.NewFrameReader(bytes.NewReader(data), 0)
	start := 0
	for {
		f, err := fr.Next()
		if err != nil {
			return start
		}
		start = int(f.Offset)
	}
}

// balanced decodes a log file the way tailproof reads it.
func balanced(t *testing.T, path string, enc v0.Encoding) []json.RawMessage {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []json.RawMessage
	if _, err := v0.Scan(f, enc, v0.Options{}, func(r v0.Record) error {
		out = append(out, r.AppendJSON(nil))
		return nil
	}); err != nil {
		t.Fatalf("re-read %s: %v", path, err)
	}
	return out
}

func canon(t *testing.T, evs []json.RawMessage) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		if err := json.Unmarshal(e, &out[i]); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	return out
}

// scratch is a fresh directory for one cut, in memory (/dev/shm) where the
// machine has it: both backends fsync several times per cut, and the cuts
// are thousands.
func scratch(t *testing.T) string {
	base := t.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "tailproof-dsh-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			base = d
		}
	}
	d, err := os.MkdirTemp(base, "cut-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// agree runs one cut through both and reports a disagreement.
func agree(t *testing.T, o *oracle.Oracle, c config, rel string, cut []byte) error {
	rootP, rootT := scratch(t), scratch(t)
	defer os.RemoveAll(rootP)
	defer os.RemoveAll(rootT)
	for _, r := range []string{rootP, rootT} {
		p := filepath.Join(r, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, cut, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := o.Load(rootP, c.compression, oracleID)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := dshlog.RecoverV0(vfs.OS, filepath.Join(rootT, rel), v0.Options{})
	refusedP := want.Inspect.Error != ""
	if (err != nil) != refusedP {
		return fmt.Errorf("refused: tailproof %v, package %q", err, want.Inspect.Error)
	}
	if err != nil {
		if got, _ := os.ReadFile(filepath.Join(rootT, rel)); !bytes.Equal(got, cut) {
			return fmt.Errorf("refused but modified the file")
		}
		return nil
	}
	st := want.Stored.OK
	var wantCut, wantSalvaged int64 = -1, 0
	if st.TornMarker != nil {
		wantCut, wantSalvaged = st.TornMarker.TruncateTo, st.TornMarker.Recovered
	}
	if rec.Plan.Cut != wantCut || rec.Plan.Salvaged != wantSalvaged {
		return fmt.Errorf("cut %d salvaging %d, package %d salvaging %d", rec.Plan.Cut, rec.Plan.Salvaged, wantCut, wantSalvaged)
	}
	got := canon(t, balanced(t, filepath.Join(rootT, rel), c.enc()))
	if d := cmp.Diff(canon(t, *want.Inspect.OK), got); d != "" {
		return fmt.Errorf("balanced events differ (-package +tailproof):\n%s", d)
	}
	if want.Load.OK == nil || cmp.Diff(canon(t, *want.Load.OK), got) != "" {
		return fmt.Errorf("package load() differs from its inspect(): %s", want.Load.Error)
	}
	// The package loads tailproof's repair as is: nothing torn, nothing to close.
	after, aerr := o.Load(rootT, c.compression, oracleID)
	if aerr != nil {
		t.Fatal(aerr)
	}
	if after.Inspect.OK == nil {
		return fmt.Errorf("the package refuses tailproof's repair: %s", after.Inspect.Error)
	}
	if after.Stored.OK.TornMarker != nil || after.Stored.OK.Events != len(got) {
		return fmt.Errorf("the package would repair tailproof's repair again: %+v", after.Stored.OK)
	}
	if d := cmp.Diff(got, canon(t, *after.Inspect.OK)); d != "" {
		return fmt.Errorf("the package reads tailproof's repair differently:\n%s", d)
	}
	return nil
}

func TestOracleV0(t *testing.T) {
	startOracle(t) // skip early without node
	full := os.Getenv("TAILPROOF_DSH_DIFF") == "full"
	seeds, turns, earlier := 1, 3, 8
	if full {
		seeds, turns, earlier = 12, 7, 300
	}
	var total atomic.Int64
	t.Run("configs", func(t *testing.T) {
		for _, c := range []config{{"zstd", true}, {"zstd", false}, {"none", true}, {"none", false}} {
			t.Run(fmt.Sprintf("%s-pack=%v", c.compression, c.pack), func(t *testing.T) {
				t.Parallel()
				o := startOracle(t) // one node per configuration: the cuts wait on fsyncs, not CPU
				for seed := 1; seed <= seeds; seed++ {
					_, rel, data := writeSession(t, o, c, seed, turns+seed%3)
					var cuts []int
					for i := lastUnitStart(t, data, c.enc()); i < len(data); i++ {
						cuts = append(cuts, i)
					}
					r := rand.New(rand.NewPCG(uint64(seed), 17))
					for range earlier {
						cuts = append(cuts, r.IntN(len(data)))
					}
					cuts = append(cuts, len(data))
					for _, n := range cuts {
						total.Add(1)
						if c.enc() == v0.Zstd {
							sameRead(t, data[:n], -1) // the parallel read of the package's own files
						}
						if err := agree(t, o, c, rel, data[:n]); err != nil {
							t.Fatalf("seed %d cut at %d of %d: %v", seed, n, len(data), err)
						}
					}
				}
			})
		}
	})
	t.Logf("%d cuts agree with the published backend", total.Load())
}

// TestOracleV0Damage: bytes changed inside the log, not only cut — the
// package and tailproof must refuse (or cut) the same way.
func TestOracleV0Damage(t *testing.T) {
	o := startOracle(t)
	total := 0
	for _, c := range []config{{"zstd", true}, {"none", true}} {
		_, rel, data := writeSession(t, o, c, 5, 4)
		r := rand.New(rand.NewPCG(5, 23))
		for range 60 {
			d := append([]byte(nil), data...)
			i := r.IntN(len(d))
			switch r.IntN(3) {
			case 0:
				d[i] ^= byte(1 << r.IntN(8))
			case 1:
				d[i] = '\n'
			default:
				d = append(d[:i], append([]byte("{not json"), d[i:]...)...)
			}
			total++
			if err := agree(t, o, c, rel, d); err != nil && !strings.Contains(err.Error(), "surface") {
				t.Fatalf("%s: damage at %d: %v", c.compression, i, err)
			}
		}
	}
	t.Logf("%d damaged logs agree with the published backend", total)
}

// TestOracleV0LargeFrame cuts inside a frame of several zstd blocks (a 400 KB
// tool result): the torn frame keeps the records of its complete blocks and
// of a torn raw block's bytes, as Node's flush decoding does.
func TestOracleV0LargeFrame(t *testing.T) {
	o := startOracle(t)
	c := config{"zstd", true}
	_, rel, data := writeSession(t, o, c, 3, 2, true)
	fr := v0.NewFrameReader(bytes.NewReader(data), 0)
	var big v0.Frame
	for {
		f, err := fr.Next()
		if err != nil {
			break
		}
		if len(f.Bytes) > len(big.Bytes) {
			big = v0.Frame{Index: f.Index, Offset: f.Offset, Bytes: append([]byte(nil), f.Bytes...)}
		}
	}
	if len(big.Bytes) < 1000 {
		t.Fatalf("no large frame (%d bytes)", len(big.Bytes))
	}
	n := 0
	for k := 1; k < 40; k++ {
		cut := int(big.Offset) + len(big.Bytes)*k/40
		n++
		if err := agree(t, o, c, rel, data[:cut]); err != nil {
			t.Fatalf("cut at %d inside frame %d (%d..%d): %v", cut, big.Index, big.Offset, big.Offset+int64(len(big.Bytes)), err)
		}
	}
	t.Logf("%d cuts inside a %d-byte frame agree", n, len(big.Bytes))
}

// TestOracleZstdPrefix checks the torn-frame decoder against Node's own
// zstd, called as the backend calls it (compress with a checksum; decode a
// torn frame with ZSTD_e_flush), on frames of raw blocks (incompressible
// bytes), compressed blocks and several blocks, cut at every byte. JSON
// logs written by dsh hold compressed blocks only; raw blocks are checked
// because a frame could hold one.
func TestOracleZstdPrefix(t *testing.T) {
	o := startOracle(t)
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 3000)
	for i := range noise {
		noise[i] = byte(r.IntN(256))
	}
	text := []byte(strings.Repeat(`{"type":"assistant/chunk","seq":1,"time":2,"data":{}}`+"\n", 60))
	var mixed []byte
	for i := 0; i < 300000; i++ {
		mixed = append(mixed, byte('a'+r.IntN(3)))
	}
	d := v0.NewFrameDecoder(0)
	defer d.Close()
	checked := 0
	for name, plain := range map[string][]byte{"raw": noise, "compressed": text, "blocks": mixed} {
		var c struct{ Frame []byte }
		if err := o.Call(map[string]any{"op": "zstd", "compress": plain}, &c); err != nil {
			t.Fatal(err)
		}
		step := 1
		if len(c.Frame) > 4000 {
			step = len(c.Frame) / 400
		}
		for n := 1; n < len(c.Frame); n += step {
			var a struct {
				Plain []byte
				Error string
			}
			if err := o.Call(map[string]any{"op": "zstd", "prefix": c.Frame[:n]}, &a); err != nil {
				t.Fatal(err)
			}
			_, err := v0.NewFrameReader(bytes.NewReader(c.Frame[:n]), 0).Next()
			var torn *v0.TornFrame
			if !errors.As(err, &torn) {
				t.Fatalf("%s: cut %d: not torn: %v", name, n, err)
			}
			got := d.DecodePrefix(torn)
			if a.Error != "" {
				a.Plain = nil // the backend recovers nothing when the decoder fails
			}
			if !bytes.Equal(got, a.Plain) {
				t.Fatalf("%s: cut %d of %d: tailproof %d bytes, Node %d bytes (%s)", name, n, len(c.Frame), len(got), len(a.Plain), a.Error)
			}
			checked++
		}
	}
	t.Logf("%d torn-frame prefixes decode as Node decodes them", checked)
}
