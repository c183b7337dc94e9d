package memory

import (
	"fmt"
	"testing"
)

// get scans small directories and binary-searches large ones: both must
// find exactly the entries set put there, at every size around the switch.
func TestDirentsGetBothWays(t *testing.T) {
	for size := 0; size <= 12; size++ {
		var d dirents
		nodes := map[string]*node{}
		for i := size - 1; i >= 0; i-- { // inserted out of order
			name := fmt.Sprintf("e%02d", i*2)
			nodes[name] = &node{}
			d.set(name, nodes[name])
		}
		for i := -1; i <= size*2; i++ {
			name := fmt.Sprintf("e%02d", i)
			n, ok := d.get(name)
			want, wantOK := nodes[name]
			if ok != wantOK || n != want {
				t.Fatalf("size %d: get(%q) = %p, %v; want %p, %v", size, name, n, ok, want, wantOK)
			}
			if _, fok := d.find(name); fok != wantOK {
				t.Fatalf("size %d: find(%q) = %v, want %v", size, name, fok, wantOK)
			}
		}
	}
}
