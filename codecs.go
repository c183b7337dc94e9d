package tailproof

import (
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/livejournal"
)

// Codecs returns a registry holding the built-in codecs: Qwen transcripts
// ("qwen-transcript"), the Qwen prompt terminal ledger ("qwen-ledger"), dsh v1
// session logs and recorded daemon live-journal streams. A harness registers
// its own formats on the returned registry.
func Codecs() *events.Registry {
	return events.NewRegistry(qwen.Codec{}, ledger.Codec{}, dsh.Codec{}, livejournal.Codec{})
}
