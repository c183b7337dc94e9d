package harness_test

import (
	"context"
	"fmt"

	"github.com/tailproof/tailproof/simulations/harness"
)

// Thirteen model runs of Claude Code's writer, one of each class, each crashed
// after every action: the figures are the same for the same seed, whatever
// the number of workers.
func ExampleRun() {
	rep := harness.Run(context.Background(), harness.Config{Harness: harness.Claude, Seed: 3, Runs: 10, Workers: 2})
	fmt.Println("classes:", len(rep.Classes), "crashes:", rep.Total.Crashes > 0, "wrong:", rep.Total.Wrong, "violations:", rep.Total.Violations())
	// Output: classes: 13 crashes: true wrong: 0 violations: 0
}
