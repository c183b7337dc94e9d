package cli

import (
	"errors"
	"fmt"

	"github.com/tailproof/tailproof"
)

// Clock gives a refused clock (tailproof.ErrInvalidClock, which the façade
// returns before appending anything) its exit code: a clock from a flag is a
// usage error (2), the system clock behind a prompt's admission a refused
// write (4). Source names the clock ("--now", "the system clock"). Any other
// error is returned as it is.
func Clock(err error, source string, fromFlag bool) error {
	if !errors.Is(err, tailproof.ErrInvalidClock) {
		return err
	}
	code := Write
	if fromFlag {
		code = Usage
	}
	return &Error{Code: code, Err: fmt.Errorf("%s: %w", source, err)}
}
