package bus_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/tailproof/tailproof/adapters/bus"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/events"
)

func recv(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		m.Ack()
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
	}
	return nil
}

func none(t *testing.T, ch <-chan *message.Message, d time.Duration) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("unexpected message %q", m.Payload)
	case <-time.After(d):
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A final segment without its newline is a line still being written, or torn
// by a crash: it is held back until the newline arrives, and never emitted
// alone.
func TestTailerHoldsTornLastLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	appendFile(t, p, "{\"a\":1}\n{\"b\":")
	tl := bus.NewTailer(bus.TailConfig{Dir: dir, PollInterval: time.Millisecond})
	defer tl.Close()
	ch, err := tl.Subscribe(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	m := recv(t, ch)
	if string(m.Payload) != `{"a":1}` || m.Metadata.Get(bus.MetaLine) != "1" || m.Metadata.Get(bus.MetaOffset) != "0" || m.Metadata.Get(bus.MetaNext) != "8" {
		t.Fatalf("first line: %q %v", m.Payload, m.Metadata)
	}
	if m.UUID != "s:0" || m.Metadata.Get(bus.MetaSession) != "s" || m.Metadata.Get(bus.MetaStream) != "transcript" {
		t.Fatalf("identity: %s %v", m.UUID, m.Metadata)
	}
	none(t, ch, 100*time.Millisecond)
	appendFile(t, p, "2}\n\n{\"c\":3}\n")
	m = recv(t, ch)
	if string(m.Payload) != `{"b":2}` || m.Metadata.Get(bus.MetaLine) != "2" || m.Metadata.Get(bus.MetaOffset) != "8" {
		t.Fatalf("completed line: %q %v", m.Payload, m.Metadata)
	}
	m = recv(t, ch)
	if string(m.Payload) != `{"c":3}` || m.Metadata.Get(bus.MetaLine) != "4" {
		t.Fatalf("line after a blank one: %q %v", m.Payload, m.Metadata)
	}
}

// Nack redelivers the same line; nothing after it is sent first.
func TestTailerNackRedelivers(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, "s.jsonl"), "one\ntwo\n")
	tl := bus.NewTailer(bus.TailConfig{Dir: dir, PollInterval: time.Millisecond})
	defer tl.Close()
	ch, _ := tl.Subscribe(context.Background(), "s")
	m := <-ch
	m.Nack()
	if m2 := recv(t, ch); string(m2.Payload) != "one" {
		t.Fatalf("after nack got %q", m2.Payload)
	}
	if m3 := recv(t, ch); string(m3.Payload) != "two" {
		t.Fatalf("got %q", m3.Payload)
	}
}

// Qwen archives a session by renaming chats/<id>.jsonl to
// chats/archive/<id>.jsonl (and back). The tailer keeps following the file
// across the move and sees what is appended at its new path.
func TestTailerFollowsArchiveMoves(t *testing.T) {
	layout := jsonl.NewQwenLayout(t.TempDir(), "/w")
	id := bustest.SessionID(1)
	active, _ := layout.TranscriptPath(id, jsonl.Active)
	archived, _ := layout.TranscriptPath(id, jsonl.Archived)
	if err := os.MkdirAll(filepath.Dir(archived), 0o700); err != nil {
		t.Fatal(err)
	}
	appendFile(t, active, "1\n")
	cfg := bus.QwenTailConfig(layout, events.StreamTranscript)
	cfg.PollInterval = time.Millisecond
	tl := bus.NewTailer(cfg)
	defer tl.Close()
	ch, err := tl.Subscribe(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m := recv(t, ch); string(m.Payload) != "1" || m.Metadata.Get(bus.MetaPath) != active {
		t.Fatalf("got %q from %s", m.Payload, m.Metadata.Get(bus.MetaPath))
	}
	if err := os.Rename(active, archived); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let the tailer notice at EOF
	appendFile(t, archived, "2\n")
	if m := recv(t, ch); string(m.Payload) != "2" || m.Metadata.Get(bus.MetaPath) != archived {
		t.Fatalf("got %q from %s", m.Payload, m.Metadata.Get(bus.MetaPath))
	}
	if err := os.Rename(archived, active); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	appendFile(t, active, "3\n")
	if m := recv(t, ch); string(m.Payload) != "3" || m.Metadata.Get(bus.MetaOffset) != "4" {
		t.Fatalf("got %q at %s", m.Payload, m.Metadata.Get(bus.MetaOffset))
	}
}

// A file replaced by a copy (another tool's move: copy then delete) resumes
// at the same offset when the copy holds the same last line; a file replaced
// by different content is read again from the start.
func TestTailerReplacedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	appendFile(t, p, "a\nb\n")
	tl := bus.NewTailer(bus.TailConfig{Dir: dir, PollInterval: time.Millisecond})
	defer tl.Close()
	ch, _ := tl.Subscribe(context.Background(), "s")
	recv(t, ch)
	recv(t, ch)
	tmp := filepath.Join(dir, "copy")
	appendFile(t, tmp, "a\nb\nc\n")
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, ch); string(m.Payload) != "c" || m.Metadata.Get(bus.MetaLine) != "3" {
		t.Fatalf("after same-prefix copy got %q line %s", m.Payload, m.Metadata.Get(bus.MetaLine))
	}
	appendFile(t, tmp, "x\ny\nz\nw\n")
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, ch); string(m.Payload) != "x" || m.Metadata.Get(bus.MetaOffset) != "0" {
		t.Fatalf("after rewrite got %q at %s", m.Payload, m.Metadata.Get(bus.MetaOffset))
	}
}

// A line longer than the limit is skipped without buffering it whole; the
// stream carries on after it.
func TestTailerSkipsOverlongLine(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, "s.jsonl"), "ok\n"+string(make([]byte, 100))+"\nafter\n")
	tl := bus.NewTailer(bus.TailConfig{Dir: dir, PollInterval: time.Millisecond, MaxLineBytes: 10})
	defer tl.Close()
	ch, _ := tl.Subscribe(context.Background(), "s")
	recv(t, ch)
	if m := recv(t, ch); string(m.Payload) != "after" || m.Metadata.Get(bus.MetaLine) != "3" {
		t.Fatalf("got %q line %s", m.Payload, m.Metadata.Get(bus.MetaLine))
	}
}

func TestTailerRefusesPathTopics(t *testing.T) {
	tl := bus.NewTailer(bus.TailConfig{Dir: t.TempDir()})
	defer tl.Close()
	for _, topic := range []string{"", "..", "a/b", "../x"} {
		if _, err := tl.Subscribe(context.Background(), topic); err == nil {
			t.Errorf("topic %q accepted", topic)
		}
	}
	layout := jsonl.NewQwenLayout(t.TempDir(), "/w")
	q := bus.NewTailer(bus.QwenTailConfig(layout, events.StreamLedger))
	defer q.Close()
	if _, err := q.Subscribe(context.Background(), "../escape"); err == nil {
		t.Error("hostile session id accepted")
	}
}

// Moved away and a different file created at the old path (Qwen's
// archive/unarchive conflict leaves both): the tailer stays with the file
// it was reading.
func TestTailerPrefersTheMovedFile(t *testing.T) {
	layout := jsonl.NewQwenLayout(t.TempDir(), "/w")
	id := bustest.SessionID(2)
	active, _ := layout.TranscriptPath(id, jsonl.Active)
	archived, _ := layout.TranscriptPath(id, jsonl.Archived)
	if err := os.MkdirAll(filepath.Dir(archived), 0o700); err != nil {
		t.Fatal(err)
	}
	appendFile(t, active, "1\n")
	cfg := bus.QwenTailConfig(layout, events.StreamTranscript)
	cfg.PollInterval = time.Millisecond
	tl := bus.NewTailer(cfg)
	defer tl.Close()
	ch, _ := tl.Subscribe(context.Background(), id)
	recv(t, ch)
	if err := os.Rename(active, archived); err != nil {
		t.Fatal(err)
	}
	appendFile(t, active, "1\nother\n")
	time.Sleep(20 * time.Millisecond)
	appendFile(t, archived, "2\n")
	if m := recv(t, ch); string(m.Payload) != "2" || m.Metadata.Get(bus.MetaPath) != archived {
		t.Fatalf("got %q from %s", m.Payload, m.Metadata.Get(bus.MetaPath))
	}
}
