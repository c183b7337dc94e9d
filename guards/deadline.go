package guards

import "fmt"

// Deadline vetoes when any other prompt has a prompt_deadline_exceeded
// terminal (reference V7). The deadline path releases the FIFO while the
// wedged agent may keep writing, so that terminal does not fence its turn's
// writes. The veto is unconditional and permanent: the append-only ledger
// never expires records, and a missing terminal beats a wrong one. It holds
// under Ownership too, because the wedged agent's model and tool writes carry
// no prompt identity.
var Deadline Guard[*Evidence] = Func("deadline", func(e *Evidence) string {
	if len(e.OtherDeadlines) == 0 {
		return ""
	}
	d := e.OtherDeadlines[0]
	return fmt.Sprintf("prompt %s exceeded its deadline (at=%d); its wedged agent may still have written", d.PromptID, d.At)
})
