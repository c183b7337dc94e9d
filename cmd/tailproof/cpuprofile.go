package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the whole command to the file
// TAILPROOF_CPUPROFILE names, when set (for `go tool pprof`; the bench
// scripts' hotspots are found this way). The returned stop ends and
// flushes it; a profile that cannot be started is reported and skipped,
// never a reason to fail the command.
func startCPUProfile(stderr io.Writer) (stop func()) {
	stopCPU := startCPU(stderr)
	path := os.Getenv("TAILPROOF_MEMPROFILE")
	if path == "" {
		return stopCPU
	}
	// TAILPROOF_MEMPROFILE names a file for an allocation profile of the
	// whole command (every allocation sampled: `go tool pprof
	// -sample_index=alloc_space`), written when it ends.
	runtime.MemProfileRate = 1
	return func() {
		stopCPU()
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "tailproof: TAILPROOF_MEMPROFILE: %v\n", err)
		}
	}
}

func startCPU(stderr io.Writer) (stop func()) {
	path := os.Getenv("TAILPROOF_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "tailproof: TAILPROOF_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "tailproof: TAILPROOF_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "tailproof: TAILPROOF_CPUPROFILE: %v\n", err)
		}
	}
}
