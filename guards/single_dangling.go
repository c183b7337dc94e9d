package guards

import (
	"fmt"
	"strings"
)

// SingleDangling allows only when exactly one prompt is dangling (reference
// V1). With several dangling prompts the reference cannot tell whose tail the
// transcript shows; ownership evidence can, so the reconciler relaxes this
// guard per target when every dangling prompt's turn is identified (see
// Ownership) — never on ordering alone.
var SingleDangling Guard[*Evidence] = Func("single-dangling", func(e *Evidence) string {
	switch len(e.Dangling) {
	case 1:
		return ""
	case 0:
		return "no prompt is dangling"
	}
	return fmt.Sprintf("%d prompts are dangling (%s); the tail cannot be attributed by ordering", len(e.Dangling), strings.Join(e.Dangling, ", "))
})
