package guards

import (
	"fmt"
	"strings"
)

// TranscriptIntegrity requires a readable, non-empty active chain (reference
// V3/V4) and — stricter than the reference, which skips bad lines anywhere —
// no undecodable line in the committed region: a record that cannot be read
// may be exactly the one that decides the verdict. A torn final fragment is
// tolerated (it was never fully written).
var TranscriptIntegrity Guard[*Evidence] = Func("transcript-integrity", func(e *Evidence) string {
	t := e.Transcript
	switch {
	case !t.Loaded:
		return "transcript unusable: " + t.LoadErr
	case len(t.BadLines) > 0:
		return fmt.Sprintf("corruption in the committed region at %s", strings.Join(t.BadLines, "; "))
	case t.Degraded != "":
		return "transcript chain degraded: " + t.Degraded
	}
	return ""
})
