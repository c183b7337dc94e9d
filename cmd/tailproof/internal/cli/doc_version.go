package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tailproof/tailproof"
)

// Every JSON document a command prints starts with "schemaVersion" (ADR
// 0027): the version of its schema under docs/schemas/. It is the façade's
// tailproof.SchemaVersion, one number for every document, so a caller reads
// one field to know it can parse the rest. It changes only when a field
// changes meaning or goes away; new fields keep it.
var versionPrefix = fmt.Appendf(nil, `{"schemaVersion":%d`, tailproof.SchemaVersion)

// Versioned returns the JSON object b with "schemaVersion" as its first
// member, unless it already starts with it. b must be a compact object (as
// json.Marshal writes it).
func Versioned(b []byte) []byte {
	if bytes.HasPrefix(b, versionPrefix) || len(b) < 2 || b[0] != '{' {
		return b
	}
	out := make([]byte, 0, len(b)+len(versionPrefix)+1)
	out = append(out, versionPrefix...)
	if b[1] != '}' {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}

// MarshalDoc marshals v as a published document: compact, HTML characters
// unescaped, schemaVersion first; indented by two spaces when indent is set.
// No trailing newline.
func MarshalDoc(v any, indent bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := Versioned(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	if !indent {
		return b, nil
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, b, "", "  "); err != nil {
		return nil, err
	}
	return ind.Bytes(), nil
}

// WriteDoc writes v as one published document and a newline; a failure to
// write is a write error (exit 4), one to encode a bug (70).
func WriteDoc(w io.Writer, v any, indent bool) error {
	b, err := MarshalDoc(v, indent)
	if err != nil {
		return &Error{Code: Internal, Err: fmt.Errorf("encode output: %w", err)}
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return &Error{Code: Write, Err: fmt.Errorf("write output: %w", err)}
	}
	return nil
}
