package main

import (
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
)

func asLedger(ev events.Event) (ledger.Record, bool) {
	switch r := ev.Body.(type) {
	case ledger.Record:
		return r, true
	case *ledger.Record:
		if r != nil {
			return *r, true
		}
	}
	return ledger.Record{}, false
}
