package events

import "io"

// ReadAheader is a reader that can read in the background: an adapter
// offers it for a large regular file, so that a decoder's read system
// calls overlap its decoding (the core starts no goroutines; the adapter
// does). StartRead begins one Read into p, which the caller leaves alone
// until WaitRead returns that Read's results; at most one read is in
// flight, and Read is not called while one is. Close waits for a read in
// flight.
type ReadAheader interface {
	io.Reader
	StartRead(p []byte)
	WaitRead() (int, error)
}
