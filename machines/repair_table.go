package machines

// The repair episode runs in a client that replayed a snapshot whose live
// journal was truncated. It waits for the turn the marker belongs to to end,
// then reloads the session once (memory replay, no model request) and
// replaces the partial tail with the complete turn, or keeps what it has and
// says so exactly once.

// RepairState is a repair episode state.
type RepairState string

// Repair episode states.
const (
	RepairIdle         RepairState = "idle"         // no recoverable marker seen
	RepairCheckpointed RepairState = "checkpointed" // a checkpoint sits just before the marker
	RepairArmed        RepairState = "armed"        // the marker's prompt formally ended
	RepairDeferred     RepairState = "deferred"     // armed, but a load, page, navigation or local prompt is in flight
	RepairLoading      RepairState = "loading"      // the one repair load is outstanding
	RepairValidating   RepairState = "validating"   // the fresh snapshot is being checked
	RepairCommitted    RepairState = "committed"    // the suffix was replaced
	RepairFailed       RepairState = "failed"       // the transcript was kept; one notice was emitted
	RepairAborted      RepairState = "aborted"      // reload, session switch, unmount or clear removed the episode
)

// RepairEvent is a repair episode event.
type RepairEvent string

// Repair episode events.
const (
	RepairOnMarker       RepairEvent = "marker"       // idle -> checkpointed
	RepairOnTerminal     RepairEvent = "terminal"     // checkpointed -> armed
	RepairOnBusy         RepairEvent = "busy"         // armed -> deferred
	RepairOnSettled      RepairEvent = "settled"      // deferred -> armed
	RepairOnLoad         RepairEvent = "load"         // armed -> loading
	RepairOnLoaded       RepairEvent = "loaded"       // loading -> validating
	RepairOnLoadFailed   RepairEvent = "load_failed"  // loading -> failed (retriable transport failure)
	RepairOnDisconnected RepairEvent = "disconnected" // loading -> failed (authentication failure or missing session)
	RepairOnCommit       RepairEvent = "commit"       // validating -> committed
	RepairOnReject       RepairEvent = "reject"       // validating -> failed
	RepairOnAbort        RepairEvent = "abort"        // any live state -> aborted
)

// RepairEpisodeTable is the repair episode's transition table.
var RepairEpisodeTable = Table{
	Name:    "repair_episode",
	Initial: string(RepairIdle),
	Transitions: []Transition{
		{Event: string(RepairOnMarker), Src: []string{string(RepairIdle)}, Dst: string(RepairCheckpointed)},
		{Event: string(RepairOnTerminal), Src: []string{string(RepairCheckpointed)}, Dst: string(RepairArmed)},
		{Event: string(RepairOnBusy), Src: []string{string(RepairArmed)}, Dst: string(RepairDeferred)},
		{Event: string(RepairOnSettled), Src: []string{string(RepairDeferred)}, Dst: string(RepairArmed)},
		{Event: string(RepairOnLoad), Src: []string{string(RepairArmed)}, Dst: string(RepairLoading)},
		{Event: string(RepairOnLoaded), Src: []string{string(RepairLoading)}, Dst: string(RepairValidating)},
		{Event: string(RepairOnLoadFailed), Src: []string{string(RepairLoading)}, Dst: string(RepairFailed)},
		{Event: string(RepairOnDisconnected), Src: []string{string(RepairLoading)}, Dst: string(RepairFailed)},
		{Event: string(RepairOnCommit), Src: []string{string(RepairValidating)}, Dst: string(RepairCommitted)},
		{Event: string(RepairOnReject), Src: []string{string(RepairValidating)}, Dst: string(RepairFailed)},
		{Event: string(RepairOnAbort), Src: []string{string(RepairCheckpointed), string(RepairArmed), string(RepairDeferred), string(RepairLoading), string(RepairValidating)}, Dst: string(RepairAborted)},
	},
}
