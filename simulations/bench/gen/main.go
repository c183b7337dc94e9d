// Command gen writes a large, realistic Qwen Code session for benchmarks: a
// transcript of tool-using turns in one of the content shapes of package
// shape, and a ledger whose last prompt is left in_flight with its turn at
// the end of the transcript — the shape a daemon crash leaves behind.
//
//	go run ./simulations/bench/gen -dir DIR -mb 600 [-shape ls|dense|code|small|mixed] [-rewind-every N]
//
// It writes DIR/projects/<sanitized cwd>/chats/<id>.jsonl and <id>.ledger.jsonl
// in Qwen Code's runtime layout (cwd /bench/workspace), so both tailproof and
// the reference read the same files. Its last line gives the turns, size,
// and the transcript's share of backslashes and quotes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/simulations/bench/shape"
)

const (
	SessionID = "b0000000-0000-4000-8000-000000000600"
	Cwd       = "/bench/workspace"
)

func main() {
	dir := flag.String("dir", "", "runtime directory to write into")
	mb := flag.Int("mb", 600, "approximate transcript size in MB")
	name := flag.String("shape", "ls", "content shape: "+strings.Join(shape.Names, ", ")+", files (with -files)")
	output := flag.Int("output-kb", 0, "size of each tool output in KiB (0: the shape's default)")
	rewind := flag.Int("rewind-every", 0, "branch every N-th turn from an earlier turn (0: never)")
	seed := flag.Uint64("seed", 1, "seed of the content")
	filesDir := flag.String("files", "", "for -shape files: a directory whose regular files (up to 1 MiB each) are the tool outputs")
	flag.Parse()
	if *dir == "" {
		log.Fatal("gen: -dir is required")
	}
	var files []string
	if *filesDir != "" {
		var err error
		if files, err = shape.ReadFiles(*filesDir); err != nil {
			log.Fatal(err)
		}
	}
	chats := filepath.Join(*dir, "projects", strings.NewReplacer("/", "-").Replace(Cwd), "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		log.Fatal(err)
	}
	tf, err := os.Create(filepath.Join(chats, SessionID+".jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	st, err := shape.Write(tf, shape.Options{Shape: *name, Bytes: int64(*mb) << 20, OutputKB: *output,
		RewindEvery: *rewind, Files: files, Seed: *seed, SessionID: SessionID, Cwd: Cwd, StartMs: 1767225600000})
	if err == nil {
		err = tf.Close()
	}
	if err != nil {
		log.Fatal(err)
	}
	lf, err := os.Create(filepath.Join(chats, SessionID+".ledger.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	lw := bufio.NewWriter(lf)
	for i, t := range st.Turns {
		if t.TailUUID == "" {
			fmt.Fprintf(lw, `{"v":1,"promptId":%q,"state":"in_flight","at":%d}`+"\n", t.PromptID, t.AdmittedAt)
		} else {
			fmt.Fprintf(lw, `{"v":1,"promptId":%q,"state":"in_flight","tailUuid":%q,"at":%d}`+"\n", t.PromptID, t.TailUUID, t.AdmittedAt)
		}
		if i < len(st.Turns)-1 { // the last prompt stays in_flight: its turn completed, its terminal was lost
			fmt.Fprintf(lw, `{"v":1,"promptId":%q,"terminal":"completed","stopReason":"end_turn","at":%d}`+"\n", t.PromptID, t.EndedAt)
		}
	}
	if err := lw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := lf.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: shape %s, %s\n", chats, *name, st)
}
