package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/ownership"
)

func init() {
	register(command{
		name:    "status",
		summary: "say what a session's tail means for recovery and whether a continuation may start",
		run:     runStatus,
	})
}

// ownerFlags collects repeated --owner CLASS:TURN values: the live owners a
// runtime reports, gated by the same predicate admission uses.
type ownerFlags []ownership.Owner

func (o *ownerFlags) String() string {
	parts := make([]string, len(*o))
	for i, x := range *o {
		parts[i] = x.Class.String() + ":" + x.Turn
	}
	return strings.Join(parts, ",")
}

func (o *ownerFlags) Set(v string) error {
	cs, turn, ok := strings.Cut(v, ":")
	c, known := ownership.ParseClass(cs)
	if !ok || !known || c == ownership.None || turn == "" {
		return fmt.Errorf("want CLASS:TURN with CLASS one of %s", classNames())
	}
	*o = append(*o, ownership.Owner{Class: c, Turn: turn})
	return nil
}

func classNames() string {
	var out []string
	for _, c := range ownership.Classes() {
		out = append(out, c.String())
	}
	return strings.Join(out, ", ")
}

type actionJSON struct {
	Supported bool   `json:"supported"`
	Reason    string `json:"reason"`
}

type partJSON struct {
	Part       json.RawMessage `json:"part"`
	Record     *string         `json:"record"`
	Provenance string          `json:"provenance,omitempty"`
	Subtype    string          `json:"subtype,omitempty"`
	Guessed    bool            `json:"guessed,omitempty"`
	Reason     string          `json:"reason,omitempty"`
}

type callJSON struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Record string `json:"record"`
}

type statusJSON struct {
	SessionID                string     `json:"sessionId,omitempty"`
	Kind                     string     `json:"kind"`
	TailKind                 string     `json:"tailKind"`
	Mode                     string     `json:"trimMode"`
	Trimmed                  int        `json:"trimmedNotifications"`
	ContinuationMode         *string    `json:"continuationMode"`
	Resend                   []partJSON `json:"resend"`
	Excluded                 []partJSON `json:"excluded"`
	DanglingCalls            []callJSON `json:"danglingCalls"`
	IdlessCalls              int        `json:"idlessCalls"`
	CanContinue              bool       `json:"canContinue"`
	Reason                   string     `json:"reason"`
	RequiresUserConfirmation bool       `json:"requiresUserConfirmation"`
	Support                  struct {
		Notice      actionJSON `json:"notice"`
		Offer       actionJSON `json:"offer"`
		AutoExecute actionJSON `json:"autoExecute"`
	} `json:"support"`
	Notice         *string  `json:"notice"`
	Cancelled      bool     `json:"cancelled"`
	CancelledBy    []string `json:"cancelledBy"`
	SettledBy      *string  `json:"settledBy"`
	Guessed        bool     `json:"guessed"`
	Guesses        []string `json:"guesses"`
	Degraded       *string  `json:"degraded"`
	Owners         []string `json:"owners"`
	LedgerInFlight []string `json:"ledgerInFlight"`
	// TranscriptState is present, missing or empty
	// (tailproof.RecoveryStatus.Transcript).
	TranscriptState string `json:"transcriptState"`
	// Turn is the session's last turn in the shape `status --harness`
	// prints for every harness (tailproof.QwenStatusTurn): the ledger's
	// last prompt, else the transcript's last turn; null when there is no
	// turn at all.
	Turn *tailproof.TurnSummary `json:"turn"`
	// Input and Warnings: what the transcript and ledger held (see
	// cli.InputReport).
	Input    cli.InputReport `json:"input"`
	Warnings []string        `json:"warnings"`
	Trace    []string        `json:"trace,omitempty"`
}

func rawPart(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(raw)
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func provenanceName(s apihistory.Source) string {
	if s.UUID == "" {
		return ""
	}
	if s.Origin == events.OriginNone { // the record carried no provenance
		return "absent"
	}
	return s.Provenance.String()
}

func toStatusJSON(st tailproof.RecoveryStatus) statusJSON {
	out := statusJSON{
		SessionID: st.SessionID, Kind: string(st.Kind), TailKind: string(st.TailKind), Mode: st.Mode.String(),
		Trimmed: st.Trimmed, ContinuationMode: strPtr(st.ContinuationMode),
		Resend: []partJSON{}, Excluded: []partJSON{}, DanglingCalls: []callJSON{}, IdlessCalls: st.IdlessCalls,
		CanContinue: st.CanContinue, Reason: st.Reason, RequiresUserConfirmation: st.RequiresUserConfirmation,
		Notice: strPtr(st.Notice), Cancelled: st.Cancelled, CancelledBy: append([]string{}, st.CancelledBy...),
		SettledBy: strPtr(st.SettledBy), Guessed: st.Guessed, Guesses: append([]string{}, st.Guesses...),
		Degraded: strPtr(st.Degraded), Owners: []string{}, LedgerInFlight: append([]string{}, st.Dangling...),
		TranscriptState: string(st.Transcript), Turn: tailproof.StatusSummary(st),
	}
	for _, p := range st.Resend {
		out.Resend = append(out.Resend, partJSON{Part: rawPart(p.Part.Raw), Record: strPtr(p.Source.UUID),
			Provenance: provenanceName(p.Source), Subtype: p.Source.Subtype, Guessed: p.Guessed})
	}
	for _, x := range st.Excluded {
		out.Excluded = append(out.Excluded, partJSON{Part: rawPart(x.Part.Raw), Record: strPtr(x.Source.UUID),
			Provenance: provenanceName(x.Source), Subtype: x.Source.Subtype, Reason: x.Reason})
	}
	for _, c := range st.DanglingCalls {
		out.DanglingCalls = append(out.DanglingCalls, callJSON{ID: c.ID, Name: c.Name, Record: c.Source.UUID})
	}
	for _, o := range st.Owners {
		out.Owners = append(out.Owners, o.Describe())
	}
	s := st.Support
	out.Support.Notice = actionJSON{s.Notice.Supported, s.Notice.Reason}
	out.Support.Offer = actionJSON{s.Offer.Supported, s.Offer.Reason}
	out.Support.AutoExecute = actionJSON{s.AutoExecute.Supported, s.AutoExecute.Reason}
	return out
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, rest, done := routeHarness(ctx, args, stdout, stderr, runHarnessStatus); done {
		return code
	} else {
		args = rest
	}
	return cli.Main(stderr, "status", func() error {
		fs := cli.NewFlagSet("status",
			"usage: tailproof status [--harness qwen] (--transcript|--file FILE [--ledger FILE] | --cwd WORKSPACE --session ID [--qwen-runtime DIR]) [--owner CLASS:TURN]... [--writer-stopped] [--json] [--trace] [--reference] [--allow-auto-continue]")
		var (
			sf        sessionFlags
			owners    ownerFlags
			asJSON    = fs.Bool("json", false, "print one JSON object")
			reference = fs.Bool("reference", false, "trim trailing notifications by content shape only, as Qwen Code 0.24.4 does")
			auto      = fs.Bool("allow-auto-continue", false, "the host's policy allows auto-continuing an interrupted prompt the evidence supports")
			trace     = fs.Bool("trace", false, "print the folds and decisions that led to the status")
			stopped   = fs.Bool("writer-stopped", false, "without a ledger: assert the process that wrote the transcript is gone, so its last turn can be decided without its turn_result")
		)
		sf.register(fs)
		fs.Var(&owners, "owner", "a live owner `CLASS:TURN` reported by the runtime (repeatable); any owner refuses a continuation")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		sess, err := sf.open()
		if err != nil {
			return err
		}
		defer sess.Close()
		// A named --transcript that does not exist failed in open (exit 3);
		// in Qwen's layout a missing or empty transcript is what a kill
		// right after admission leaves, and Status answers it
		// (RecoveryStatus.Transcript).
		input := cli.InputReport{Transcript: &sess.Transcript}
		var ledger adapters.LedgerStore
		if sess.Ledger.Path != "" {
			if input, err = scanLedger(ctx, sess); err != nil {
				return err
			}
			input.Transcript = &sess.Transcript
			if sess.Ledger.Present {
				ledger = sess.Store
			}
		}
		st, err := tailproof.Status(ctx, sess.Store, sess.ID, tailproof.StatusOptions{
			Ledger: ledger, Owners: owners, Reference: *reference, AllowAutoContinue: *auto,
		})
		if err != nil {
			return cli.WithCode(cli.Code(err, cli.Input), err)
		}
		// Status reads the whole transcript; it is scanned again only when
		// the status found it degraded, or under --reference, which skips
		// undecodable lines without a word.
		switch {
		case st.Transcript == tailproof.TranscriptMissing:
		case st.Degraded != "" || *reference:
			rep, err := cli.ScanTranscript(sess.OpenTranscript(ctx), 0)
			if err != nil {
				return cli.WithCode(cli.Input, err)
			}
			rep.Path = sess.Transcript.Path
			input.Transcript = &rep
		default:
			input.Transcript.Checked, input.Transcript.First = true, []cli.Position{}
		}
		turnObj, err := qwenStatusTurn(ctx, sess, st, ledger != nil, *stopped)
		if err != nil {
			return cli.WithCode(cli.Code(err, cli.Input), err)
		}
		w := &cli.Printer{W: stdout}
		if *asJSON {
			out := toStatusJSON(st)
			out.Turn = turnObj
			out.Input, out.Warnings = input, input.Warnings()
			if *trace {
				out.Trace = st.Trace
			}
			w.JSON(out)
			return w.Err()
		}
		w.Printf("%s", st.Describe())
		if turnObj != nil {
			printTurn(w, *turnObj)
		}
		w.Tail(input.Warnings(), st.Trace, *trace)
		return w.Err()
	})
}
