package memory_test

import (
	"os"
	"testing"

	"github.com/tailproof/tailproof/adapters/memory"
)

// A handle's Stat is a snapshot: a later write, or a later Stat, does not
// change what an earlier one returned.
func TestFileStatIsASnapshot(t *testing.T) {
	m := memory.NewFS()
	f, err := m.OpenFile("/f", os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sizes []int64
	var infos []interface{ Size() int64 }
	for i := 0; i < 3; i++ {
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		infos, sizes = append(infos, st), append(sizes, st.Size())
		if st.Name() != "f" || !st.Mode().IsRegular() {
			t.Fatalf("stat %d: name %q mode %v", i, st.Name(), st.Mode())
		}
		if _, err := f.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
	}
	for i, st := range infos {
		if want := int64(3 * i); sizes[i] != want || st.Size() != want {
			t.Fatalf("stat %d: size %d, now %d, want %d", i, sizes[i], st.Size(), want)
		}
	}
}
