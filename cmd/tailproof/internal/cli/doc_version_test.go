package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestVersioned(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                   `{"schemaVersion":1,"a":1}`,
		`{}`:                        `{"schemaVersion":1}`,
		`{"schemaVersion":1,"a":1}`: `{"schemaVersion":1,"a":1}`,
		`[1]`:                       `[1]`,
		``:                          ``,
	} {
		if got := string(Versioned([]byte(in))); got != want {
			t.Errorf("Versioned(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestMarshalDoc(t *testing.T) {
	v := struct {
		A string `json:"a"`
	}{"<x>"}
	b, err := MarshalDoc(v, false)
	if err != nil || string(b) != `{"schemaVersion":1,"a":"<x>"}` {
		t.Errorf("compact: %s, %v", b, err)
	}
	b, err = MarshalDoc(v, true)
	if err != nil || string(b) != "{\n  \"schemaVersion\": 1,\n  \"a\": \"<x>\"\n}" {
		t.Errorf("indented: %s, %v", b, err)
	}
	if _, err := MarshalDoc(func() {}, false); err == nil {
		t.Error("a func marshalled")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteDocCodes(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteDoc(&buf, map[string]int{"n": 1}, false); err != nil || buf.String() != "{\"schemaVersion\":1,\"n\":1}\n" {
		t.Errorf("WriteDoc: %q, %v", buf.String(), err)
	}
	if err := WriteDoc(failWriter{}, map[string]int{}, false); Code(err, OK) != Write || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a failed write: %v (code %d), want exit %d", err, Code(err, OK), Write)
	}
	if err := WriteDoc(&buf, func() {}, false); Code(err, OK) != Internal {
		t.Errorf("an unencodable value: %v, want exit %d", err, Internal)
	}
}
