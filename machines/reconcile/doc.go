// Package reconcile is tailproof's decision core: given a session's prompt
// ledger and its transcript's active chain, it decides, for each prompt left
// in_flight, whether it completed, was interrupted, or cannot be known — and
// it does nothing else. It holds no store, reads no file, no clock and no
// context; the façade (tailproof.Reconcile) does the IO around it, the way
// raft's RawNode is driven through Step and Ready.
//
// # The loop a caller runs
//
//	core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof(), Workspace: ws})
//	for each ledger record r (file order): core.AddLedger(r)
//	core.EndLedger(records, dropped, bytesRead)
//	if core.NeedsTranscript() {
//		core.StartChain()                    // again on a restart: fresh folds
//		for each active-chain event e: core.AddChainEvent(e)
//		core.EndChain(chain, walkErr)        // or core.ChainUnavailable(err, missing)
//	}
//	rd := core.Ready()                       // the decisions; NeedFence when one is proven
//	if rd.NeedFence {
//		rd = core.Commit(ledgerSizeNow, err) // the race fence: the size read vs now
//	}
//	stamp the clock into each Decision.Appended, append them in order
//
// The caller's duties: feed the ledger once, in file order, and say how many
// bytes it read; feed the chain in chain order (one walk, whatever the number
// of dangling prompts — every candidate's fold is fed by the same events);
// measure the ledger's size just before appending (a stat or a byte count, no
// second decode) and append nothing that Commit did not return; append in the
// order returned (admission order).
//
// # Where a verdict comes from
//
// Each dangling prompt runs the machine of Table. Every step is guarded
// (Rules.Guards): select, attribute (the ledger: which admission is the
// prompt's), check-evidence (the transcript), then exactly one of five
// classification transitions, each a route to a verdict:
//
//	own-turn-result      the prompt's own system/turn_result says completed
//	local-slash-command  a local slash command answered it, nothing visible after
//	not-dispatched       no prompt record follows its dispatch marker: never started
//	tail-complete        the classifiable tail ends answered
//	tail-interrupted     the classifiable tail ends unanswered (or mid tool call)
//
// and commit (the fence). A veto at any step sends the prompt to unknown and
// appends nothing. So the answer to "which rule decided this" is: the route
// in Decision.Route (this package, decide.go's classify), the vetoes in
// Decision.Vetoes (package guards, one file per guard), and the evidence in
// Decision.Evidence (folded by projections/attribution and
// projections/ledgerview).
//
// # Rules
//
// A Rules value is a whole rule set. Tailproof() is tailproof's; Qwen0244()
// is exactly Qwen Code 0.24.4's reconcileDanglingPromptTerminals (the rules
// V1–V14 quoted in docs/reference-rules.md). Every difference between them is
// a field: the guards per step, whether prompt identities are evidence, which
// dangling prompts are decided (DanglingPolicy), whether undecodable lines
// and chain damage count, the two extra routes, and the notification trim.
//
// # Several dangling prompts
//
// Under EachOwnEvidence (tailproof's rules) every dangling prompt is
// decided in one pass, each from its own attribution fold: the tail owner —
// the prompt whose own prompt record is the chain's last identified one — by
// any route, every other prompt only by its own turn_result (guards
// OwnEvidence; ADR 0014). Under FirstOnly (the reference's) the first
// dangling prompt is considered and single-dangling vetoes when there are
// several.
//
// # Status
//
// tailproof.Status drives the same core over the same walk and reads
// Target, TurnResult and History from it, so a recovery status and a
// reconciliation cannot pick different prompts.
package reconcile
