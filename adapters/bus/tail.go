package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/events"
)

// UnmarshalFunc turns one complete line (without its newline) of topic's file
// into a message. The tailer then adds position metadata.
type UnmarshalFunc func(topic string, line []byte, pos events.Position) (*message.Message, error)

// TailConfig configures a Tailer.
type TailConfig struct {
	// Paths maps a topic to the paths its file may live at, in preference
	// order. When the file the tailer follows disappears from its path (an
	// archive move), the tailer looks for it at the others. Default:
	// Dir/<topic>.jsonl only.
	Paths func(topic string) ([]string, error)
	Dir   string
	// Stream is the MetaStream of the lines (default events.StreamTranscript).
	Stream events.Stream
	// PollInterval is how often EOF is re-checked (default 20ms). Polling,
	// not inotify: it works on network mounts and has no watch limits.
	PollInterval time.Duration
	// StartOffset returns the resume offset for topic (a checkpointed
	// MetaNext); nil: 0.
	StartOffset func(topic string) int64
	// MaxLineBytes bounds a line (<= 0: events.DefaultMaxLineBytes); a longer
	// line is skipped with an error log, never buffered whole.
	MaxLineBytes int
	// Unmarshal builds a message from a line (default RawLine).
	Unmarshal UnmarshalFunc
	Logger    watermill.LoggerAdapter
}

// RawLine is the default UnmarshalFunc: payload = the line, uuid =
// "<topic>:<offset>", stable across redeliveries and restarts.
func RawLine(topic string, line []byte, pos events.Position) (*message.Message, error) {
	return message.NewMessage(topic+":"+strconv.FormatInt(pos.Offset, 10), append([]byte(nil), line...)), nil
}

// QwenTailConfig tails Qwen Code's session files in layout: the topic is the
// session id, the paths are chats/<id>.jsonl then chats/archive/<id>.jsonl
// (the ledger's when stream is events.StreamLedger), so a session archived
// or unarchived while tailed is followed across the move.
func QwenTailConfig(layout jsonl.QwenLayout, stream events.Stream) TailConfig {
	pathOf := layout.TranscriptPath
	if stream == events.StreamLedger {
		pathOf = layout.LedgerPath
	}
	return TailConfig{
		Stream: stream,
		Paths: func(id string) ([]string, error) {
			a, err := pathOf(id, jsonl.Active)
			if err != nil {
				return nil, err
			}
			b, err := pathOf(id, jsonl.Archived)
			if err != nil {
				return nil, err
			}
			return []string{a, b}, nil
		},
	}
}

func (c *TailConfig) defaults() {
	if c.Paths == nil {
		dir := c.Dir
		c.Paths = func(topic string) ([]string, error) {
			if topic == "" || topic != filepath.Base(topic) || topic == "." || topic == ".." {
				return nil, fmt.Errorf("bus: topic %q is not a file name", topic)
			}
			return []string{filepath.Join(dir, topic+".jsonl")}, nil
		}
	}
	if c.Stream == "" {
		c.Stream = events.StreamTranscript
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 20 * time.Millisecond
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = events.DefaultMaxLineBytes
	}
	if c.Unmarshal == nil {
		c.Unmarshal = RawLine
	}
	if c.Logger == nil {
		c.Logger = watermill.NopLogger{}
	}
}

// Tailer is a watermill Subscriber that follows JSONL files as they grow.
//
//   - It emits only complete lines: a final segment without its newline is a
//     line still being written (or torn by a crash) and is held back until
//     the newline arrives, so a torn tail is never delivered.
//   - One message in flight per topic: the next line is sent only after Ack;
//     Nack redelivers the same line as a fresh message.
//   - Each message's context derives from the Subscribe context and is
//     cancelled after Ack or Nack; the channel closes when that context is
//     cancelled or Close is called.
//   - A file that moves (rename between chats/ and chats/archive/) is
//     followed: the open descriptor keeps reading the same file, and the
//     tailer switches its path to wherever the file now is. A file replaced
//     by a copy is reopened at the same offset when its prefix matches the
//     last line emitted, and from offset 0 otherwise (at-least-once).
//
// It passes watermill's universal Pub/Sub suite (see the package manual).
type Tailer struct {
	cfg       TailConfig
	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	mu        sync.Mutex
	closed    bool
}

// NewTailer returns a Tailer.
func NewTailer(cfg TailConfig) *Tailer {
	cfg.defaults()
	return &Tailer{cfg: cfg, closing: make(chan struct{})}
}

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("bus: subscriber closed")

// Subscribe starts following topic's file.
func (t *Tailer) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	paths, err := t.cfg.Paths(topic)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("bus: topic %q maps to no path", topic)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	out := make(chan *message.Message)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer close(out)
		f := &follower{t: t, topic: topic, paths: paths, out: out,
			log: t.cfg.Logger.With(watermill.LogFields{"topic": topic})}
		f.run(ctx)
	}()
	return out, nil
}

// Close stops every subscription, including one blocked waiting for an Ack
// or on a full channel, and returns once their channels are closed.
func (t *Tailer) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		close(t.closing)
	})
	t.wg.Wait()
	return nil
}

type follower struct {
	t     *Tailer
	topic string
	paths []string
	out   chan<- *message.Message
	log   watermill.LoggerAdapter

	f       *os.File
	path    string
	off     int64  // offset of the next unread byte of a complete line
	lineNo  int    // physical lines consumed so far
	last    []byte // the last complete line consumed (with newline), to check a replaced file's prefix
	partial []byte // bytes read past off that do not yet end in a newline
	skip    bool   // inside an over-long line: drop bytes to its newline
}

func (f *follower) sleep(ctx context.Context) bool {
	tm := time.NewTimer(f.t.cfg.PollInterval)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
	case <-f.t.closing:
	}
	return false
}

func (f *follower) run(ctx context.Context) {
	if f.t.cfg.StartOffset != nil {
		f.off = f.t.cfg.StartOffset(f.topic)
	}
	defer func() {
		if f.f != nil {
			f.f.Close()
		}
	}()
	for f.f == nil {
		f.open(f.off)
		if f.f == nil && !f.sleep(ctx) {
			return
		}
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.f.Read(buf)
		if n > 0 {
			if !f.consume(ctx, buf[:n]) {
				return
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			f.log.Error("read failed", err, nil)
		}
		// At EOF: the file may have moved or been replaced.
		f.follow()
		if !f.sleep(ctx) {
			return
		}
	}
}

// open opens the first existing candidate path at offset off.
func (f *follower) open(off int64) {
	for _, p := range f.paths {
		fh, err := os.Open(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				f.log.Error("open failed", err, watermill.LogFields{"path": p})
			}
			continue
		}
		if _, err := fh.Seek(off, io.SeekStart); err != nil {
			fh.Close()
			f.log.Error("seek failed", err, watermill.LogFields{"path": p})
			continue
		}
		f.f, f.path = fh, p
		return
	}
}

// follow checks, at EOF, that the followed file is still the one at a
// candidate path; it switches path on a rename and reopens on a replacement.
func (f *follower) follow() {
	cur, err := f.f.Stat()
	if err != nil {
		return
	}
	if st, err := os.Stat(f.path); err == nil && os.SameFile(cur, st) {
		return
	}
	// Renamed: the descriptor still reads the same file wherever it went.
	// Looked for first, so a new file at the old path is not mistaken for it.
	for _, p := range f.paths {
		if st, err := os.Stat(p); err == nil && os.SameFile(cur, st) {
			f.path = p
			return
		}
	}
	for _, p := range f.paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		// Replaced by another file: resume at the same offset only if it
		// holds the same last line there; otherwise start over.
		start := f.off - int64(len(f.last))
		nf, err := os.Open(p)
		if err != nil {
			continue
		}
		same := st.Size() >= f.off
		if same && len(f.last) > 0 {
			got := make([]byte, len(f.last))
			if _, err := nf.ReadAt(got, start); err != nil || !bytes.Equal(got, f.last) {
				same = false
			}
		}
		off := f.off
		if !same {
			f.log.Info("followed file replaced with different content; restarting from offset 0", watermill.LogFields{"path": p})
			off, f.lineNo, f.last = 0, 0, nil
		}
		if _, err := nf.Seek(off, io.SeekStart); err != nil {
			nf.Close()
			continue
		}
		f.f.Close()
		f.f, f.path, f.off, f.partial, f.skip = nf, p, off, nil, false
		return
	}
}

// consume splits chunk into lines and delivers each complete one.
func (f *follower) consume(ctx context.Context, chunk []byte) bool {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			if f.skip {
				f.off += int64(len(chunk))
				return true
			}
			f.partial = append(f.partial, chunk...)
			if len(f.partial) > f.t.cfg.MaxLineBytes {
				f.log.Error("line too long; skipped", nil, watermill.LogFields{"offset": f.off, "limit": f.t.cfg.MaxLineBytes})
				f.off += int64(len(f.partial))
				f.partial, f.skip = nil, true
			}
			return true
		}
		seg := chunk[:i+1]
		chunk = chunk[i+1:]
		if f.skip {
			f.off += int64(len(seg))
			f.lineNo++
			f.skip = false
			continue
		}
		line := append(f.partial, seg...)
		f.partial = nil
		start := f.off
		f.off += int64(len(line))
		f.lineNo++
		f.last = append(f.last[:0], line...)
		body := line[:len(line)-1]
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		if len(body) > f.t.cfg.MaxLineBytes {
			f.log.Error("line too long; skipped", nil, watermill.LogFields{"offset": start, "limit": f.t.cfg.MaxLineBytes})
			continue
		}
		pos := events.Position{Line: f.lineNo, Offset: start}
		msg, err := f.t.cfg.Unmarshal(f.topic, body, pos)
		if err != nil {
			// A line that cannot be framed never will be: log and move on,
			// as a reader of a corrupt region does.
			f.log.Error("undecodable line skipped", err, watermill.LogFields{"offset": start})
			continue
		}
		if msg.Metadata.Get(MetaStream) == "" {
			msg.Metadata.Set(MetaStream, string(f.t.cfg.Stream))
		}
		if msg.Metadata.Get(MetaSession) == "" {
			msg.Metadata.Set(MetaSession, f.topic)
		}
		msg.Metadata.Set(MetaLine, strconv.Itoa(pos.Line))
		msg.Metadata.Set(MetaOffset, strconv.FormatInt(start, 10))
		msg.Metadata.Set(MetaNext, strconv.FormatInt(f.off, 10))
		msg.Metadata.Set(MetaPath, f.path)
		if !f.deliver(ctx, msg) {
			return false
		}
	}
	return true
}

// deliver sends msg and waits for its Ack; a Nack resends a fresh copy.
func (f *follower) deliver(ctx context.Context, msg *message.Message) bool {
	for {
		mctx, cancel := context.WithCancel(ctx)
		m := msg.Copy()
		m.SetContext(mctx)
		select {
		case f.out <- m:
		case <-ctx.Done():
			cancel()
			return false
		case <-f.t.closing:
			cancel()
			return false
		}
		select {
		case <-m.Acked():
			cancel()
			return true
		case <-m.Nacked():
			cancel()
		case <-ctx.Done():
			cancel()
			return false
		case <-f.t.closing:
			cancel()
			return false
		}
	}
}

// Appender is the Publisher half used to run watermill's universal suite
// against Tailer, and by tests that play a harness writing its files: each
// message becomes one line of Dir/<topic>.jsonl, written with O_APPEND in a
// single write per batch so a concurrent reader sees whole lines or a
// held-back partial one.
type Appender struct {
	Dir     string
	Marshal func(*message.Message) ([]byte, error) // default: the payload
	mu      sync.Mutex
	closed  bool
}

// Publish appends msgs to topic's file.
func (a *Appender) Publish(topic string, msgs ...*message.Message) error {
	if topic == "" || topic != filepath.Base(topic) || topic == "." || topic == ".." {
		return fmt.Errorf("bus: topic %q is not a file name", topic)
	}
	var b bytes.Buffer
	for _, m := range msgs {
		line := m.Payload
		if a.Marshal != nil {
			var err error
			if line, err = a.Marshal(m); err != nil {
				return err
			}
		}
		if bytes.IndexByte(line, '\n') >= 0 {
			return fmt.Errorf("bus: message %s holds a newline; one message is one line", m.UUID)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return errors.New("bus: appender closed")
	}
	fh, err := os.OpenFile(filepath.Join(a.Dir, topic+".jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	_, werr := fh.Write(b.Bytes())
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("bus: %w", werr)
	}
	return nil
}

// Close makes further Publish calls fail.
func (a *Appender) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	return nil
}

type envelope struct {
	UUID     string            `json:"uuid"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Payload  []byte            `json:"payload"`
}

// EnvelopeMarshal writes a whole message (uuid, metadata, payload) as one
// JSON line, for transports that must round-trip message identity (the
// universal suite checks it). Session files use the raw line instead.
func EnvelopeMarshal(m *message.Message) ([]byte, error) {
	return json.Marshal(envelope{UUID: m.UUID, Metadata: m.Metadata, Payload: m.Payload})
}

// EnvelopeUnmarshal reads a line written by EnvelopeMarshal.
func EnvelopeUnmarshal(topic string, line []byte, pos events.Position) (*message.Message, error) {
	var e envelope
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("bus: %s %s: %w: %w", topic, pos, ErrBadMessage, err)
	}
	m := message.NewMessage(e.UUID, e.Payload)
	for k, v := range e.Metadata {
		m.Metadata.Set(k, v)
	}
	return m, nil
}
