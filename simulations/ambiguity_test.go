package simulations

import "testing"

// Keys ignore what an order- and equality-reading rule cannot see: the
// names of ids and the distances between clocks; they keep everything else.
func TestEvidenceKey(t *testing.T) {
	l1 := []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1000}` + "\n")
	t1 := []byte(`{"uuid":"r0-1","parentUuid":null,"timestamp":"2026-01-01T00:00:01.500Z","type":"user","daemonPromptId":"p1"}` + "\n")
	l2 := []byte(`{"v":1,"promptId":"p7","state":"in_flight","at":1000}` + "\n")
	t2 := []byte(`{"uuid":"r3-9","parentUuid":null,"timestamp":"2026-01-01T00:00:09.000Z","type":"user","daemonPromptId":"p7"}` + "\n")
	if evidenceKey(l1, t1, "p1") != evidenceKey(l2, t2, "p7") {
		t.Fatal("renamed ids and a stretched clock changed the key")
	}
	// The record before the admission instead of after it: a different order.
	t3 := []byte(`{"uuid":"r0-1","parentUuid":null,"timestamp":"1970-01-01T00:00:00.500Z","type":"user","daemonPromptId":"p1"}` + "\n")
	if evidenceKey(l1, t1, "p1") == evidenceKey(l1, t3, "p1") {
		t.Fatal("a clock on the other side of the admission kept the key")
	}
	if evidenceKey(l1, t1, "p1") == evidenceKey(l1, t1, "p2") {
		t.Fatal("another target kept the key")
	}
	t4 := []byte(`{"uuid":"r0-1","parentUuid":null,"timestamp":"2026-01-01T00:00:01.500Z","type":"assistant","daemonPromptId":"p1"}` + "\n")
	if evidenceKey(l1, t1, "p1") == evidenceKey(l1, t4, "p1") {
		t.Fatal("another record type kept the key")
	}
}

// A key counts as ambiguous only once both truths were seen with it, and
// each prompt is counted in the class it arose in.
func TestAmbiguityTally(t *testing.T) {
	var a ambiguityTally
	k1, k2 := [32]byte{1}, [32]byte{2}
	a.add(0, []DanglingKey{{Key: k1, Completed: true, Ref: Correct}, {Key: k2, Completed: true, TP: Correct}})
	a.add(1, []DanglingKey{{Key: k1, Completed: false, Ref: Wrong}, {Key: k2, Completed: true}})
	got := a.report([]string{"a", "b"})
	want := []Ambiguity{{Class: "a", Ambiguous: 1, ReferenceCorrect: 1}, {Class: "b", Ambiguous: 1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("report = %+v, want %+v", got, want)
	}
}
