package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events/ledger"
)

// appendedEmpty is how MarshalDoc writes harnessReconcileJSON's empty
// appended array. A string value cannot hold it unescaped, so its first
// occurrence in the document is the field.
var appendedEmpty = []byte(`"appended":[]`)

// writeReconcileJSON writes `reconcile --harness … --json` with its
// appended array streamed from stamps, one element at a time: the document
// is byte for byte what MarshalDoc makes of out with every stamp in
// out.Appended (TestReconcileJSONStreamed), without holding a run's
// terminals as structs, lines and one marshalled document at once.
func writeReconcileJSON(w *bufio.Writer, out harnessReconcileJSON, stamps *tailproof.Stamps) error {
	out.Appended = []stampLine{}
	doc, err := cli.MarshalDoc(out, false)
	if err != nil {
		return &cli.Error{Code: cli.Internal, Err: fmt.Errorf("encode output: %w", err)}
	}
	cut := bytes.Index(doc, appendedEmpty)
	if cut < 0 {
		return &cli.Error{Code: cli.Internal, Err: errors.New("encode output: no appended array")}
	}
	cut += len(appendedEmpty) - 1 // before the closing ']'
	w.Write(doc[:cut])
	var elem bytes.Buffer
	enc := json.NewEncoder(&elem)
	enc.SetEscapeHTML(false)
	for i := range stamps.Len() {
		r := stamps.At(i)
		elem.Reset()
		if i > 0 {
			elem.WriteByte(',')
		}
		if err := enc.Encode(stampLine{Turn: r.PromptID, Terminal: string(r.Terminal), Code: r.Code,
			StopReason: r.StopReason, At: r.At, Line: string(ledger.Encode(r))}); err != nil {
			return &cli.Error{Code: cli.Internal, Err: fmt.Errorf("encode output: %w", err)}
		}
		w.Write(bytes.TrimSuffix(elem.Bytes(), []byte("\n"))) // Encode ends each value with a newline
	}
	w.Write(doc[cut:])
	_, err = w.Write([]byte{'\n'})
	return outputErr(err)
}

// flushOutput flushes the buffered output; a failure is a write error.
func flushOutput(w *bufio.Writer) error { return outputErr(w.Flush()) }

func outputErr(err error) error {
	if err != nil {
		return &cli.Error{Code: cli.Write, Err: fmt.Errorf("write output: %w", err)}
	}
	return nil
}
